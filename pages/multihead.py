from ui import context, views

ctx = context.get()
views.intro("multihead")
layer = views.layer_picker("layer.enc")
views.step(f"enc.{layer}.attn.concat")
views.step(f"enc.{layer}.attn.out")
