from ui.lessons import blocks
from ui.views import frame, pickers


@frame.page
def page(ctx):
    frame.intro(ctx, "dec_ffn")
    blocks.ffn("dec", pickers.layer_picker("layer.dec"), key="dec_ffn")


page()
