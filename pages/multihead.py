from ui import blocks, views


@views.page
def page():
    views.intro("multihead")
    layer = views.layer_picker("layer.enc")
    blocks.equations(f"enc.{layer}.attn")
    views.flow([f"enc.{layer}.attn.concat", f"enc.{layer}.attn.out"], key="multihead")


page()
