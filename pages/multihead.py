from ui import context, views

ctx = context.get()
views.intro("multihead")
layer = views.layer_picker("layer.enc")
block = f"enc.{layer}.attn"
views.step(f"{block}.concat")
views.edit_param(f"{block}.W_O")
views.step(f"{block}.out")
