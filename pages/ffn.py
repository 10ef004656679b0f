from ui import context, views

ctx = context.get()
views.intro("ffn")
layer = views.layer_picker("layer.enc")
for kind in ("hidden", "act", "out"):
    views.step(f"enc.{layer}.ffn.{kind}")
