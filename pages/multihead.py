from ui import context, views

ctx = context.get()
views.intro("multihead")
layer = views.layer_picker("layer.enc")
views.flow([f"enc.{layer}.attn.concat", f"enc.{layer}.attn.out"], key="multihead")
