from ui.lessons import blocks
from ui.views import frame, pickers


@frame.page
def page(ctx):
    frame.intro(ctx, "dec_ffn")
    blocks.ffn(ctx, "dec", pickers.layer_picker(ctx, "layer.dec"), key="dec_ffn")


page()
