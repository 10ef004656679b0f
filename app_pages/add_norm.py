from ui.lessons import blocks, derivation_views
from ui.views import frame, pickers


@frame.page
def page(ctx):
    frame.intro(ctx, "add_norm")
    blocks.add_norm(ctx, "enc", pickers.layer_picker(ctx, "layer.enc"), key="add_norm")
    derivation_views.layer_norm(ctx)


page()
