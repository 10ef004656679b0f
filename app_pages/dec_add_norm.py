from ui.lessons import blocks
from ui.views import frame, pickers


@frame.page
def page(ctx):
    frame.intro(ctx, "dec_add_norm")
    blocks.add_norm(ctx, "dec", pickers.layer_picker(ctx, "layer.dec"), key="dec_add_norm")


page()
