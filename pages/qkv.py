from ui import views


@views.page
def page():
    views.intro("qkv")
    layer = views.layer_picker("layer.enc")
    block = f"enc.{layer}.attn"
    head = views.head_picker(f"heads.qkv.{layer}")
    views.flow([f"{block}.{kind}" for kind in ("q", "k", "v")], head, key="qkv")


page()
