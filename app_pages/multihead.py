from ui.lessons import blocks
from ui.views import frame, pickers, steps


@frame.page
def page(ctx):
    frame.intro(ctx, "multihead")
    layer = pickers.layer_picker("layer.enc")
    blocks.equations(ctx, f"enc.{layer}.attn")
    steps.flow(steps.page_steps("multihead", f"enc.{layer}.attn"), key="multihead")


page()
