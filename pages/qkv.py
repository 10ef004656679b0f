from ui import blocks, derivation_views, views


@views.page
def page():
    views.intro("qkv")
    layer = views.layer_picker("layer.enc")
    block = f"enc.{layer}.attn"
    head = views.head_picker(f"heads.qkv.{layer}")
    blocks.weights_side_by_side(block, head)
    views.flow([f"{block}.{kind}" for kind in ("q", "k", "v")], head, key="qkv")
    derivation_views.qkv(block, head)


page()
