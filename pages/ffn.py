from ui import views


@views.page
def page():
    views.intro("ffn")
    layer = views.layer_picker("layer.enc")
    views.flow([f"enc.{layer}.ffn.{kind}" for kind in ("hidden", "act", "out")], key="ffn")


page()
