from ui.vision import vit_encoder_views, vit_frame


@vit_frame.page
def page(ctx):
    vit_frame.intro(ctx, "vit_encoder")
    vit_encoder_views.sizes(ctx)
    vit_encoder_views.layer(ctx)


page()
