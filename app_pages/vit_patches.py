from ui.views import steps
from ui.vision import image_views, vit_frame


@vit_frame.page
def page(ctx):
    vit_frame.intro(ctx, "vit_patches")
    chosen = image_views.image_and_pad(ctx)
    image_views.patch_row(ctx, chosen)
    steps.step(ctx, "img.patches")


page()
