from ui.vision import vit_frame, vit_head_views


@vit_frame.page
def page(ctx):
    vit_frame.intro(ctx, "vit_head")
    vit_head_views.seed_slips(ctx.t)
    vit_head_views.head(ctx)
    vit_head_views.probabilities(ctx)


page()
