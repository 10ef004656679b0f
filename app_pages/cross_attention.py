from ui.lessons import blocks
from ui.views import frame, pickers


@frame.page
def page():
    frame.intro("cross_attention")
    layer = pickers.layer_picker("layer.dec")
    blocks.attention(f"dec.{layer}.cross_attn", key="cross", focus="weights")


page()
