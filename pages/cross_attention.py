from ui import blocks, views


@views.page
def page():
    views.intro("cross_attention")
    layer = views.layer_picker("layer.dec")
    blocks.attention(f"dec.{layer}.cross_attn", key="cross", focus="weights")


page()
