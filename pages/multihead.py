from ui.lessons import blocks
from ui.views import frame, pickers, steps


@frame.page
def page():
    frame.intro("multihead")
    layer = pickers.layer_picker("layer.enc")
    blocks.equations(f"enc.{layer}.attn")
    steps.flow([f"enc.{layer}.attn.concat", f"enc.{layer}.attn.out"], key="multihead")


page()
