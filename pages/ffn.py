from ui import context, views

ctx = context.get()
views.intro("ffn")
layer = views.layer_picker("layer.enc")
views.flow([f"enc.{layer}.ffn.{kind}" for kind in ("hidden", "act", "out")], key="ffn")
