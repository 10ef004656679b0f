from ui.views import steps
from ui.vision import embed_views, vit_frame


@vit_frame.page
def page(ctx):
    vit_frame.intro(ctx, "vit_embed")
    embed_views.product(ctx)
    steps.flow(ctx, ["img.embed", "img.cls", "img.pos", "img.input"], key="vit_embed")
    embed_views.position_maps(ctx)


page()
