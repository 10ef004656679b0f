from ui import context, views

ctx = context.get()
views.intro("ffn")
layer = views.layer_picker("layer.enc")
block = f"enc.{layer}.ffn"
views.step(f"{block}.hidden")
views.edit_param(f"{block}.W_1")
views.step(f"{block}.act")
views.step(f"{block}.out")
views.edit_param(f"{block}.W_2")
