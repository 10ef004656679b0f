from ui import blocks, views


@views.page
def page():
    views.intro("masked_attention")
    layer = views.layer_picker("layer.dec")
    blocks.attention(f"dec.{layer}.self_attn", key="masked", focus="masked")


page()
