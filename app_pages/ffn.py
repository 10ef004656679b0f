from ui.lessons import blocks
from ui.views import frame, pickers


@frame.page
def page(ctx):
    frame.intro(ctx, "ffn")
    blocks.ffn(ctx, "enc", pickers.layer_picker(ctx, "layer.enc"), key="ffn")


page()
