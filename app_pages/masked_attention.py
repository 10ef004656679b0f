from ui.lessons import blocks
from ui.views import frame, pickers


@frame.page
def page():
    frame.intro("masked_attention")
    layer = pickers.layer_picker("layer.dec")
    blocks.attention(f"dec.{layer}.self_attn", key="masked", focus="masked")


page()
