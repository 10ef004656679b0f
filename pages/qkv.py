from ui import views


@views.page
def page():
    views.intro("qkv")
    layer = views.layer_picker("layer.enc")
    block = f"enc.{layer}.attn"
    for head in views.head_tabs(f"heads.qkv.{layer}"):
        views.flow([f"{block}.{kind}" for kind in ("q", "k", "v")], head, key="qkv")


page()
