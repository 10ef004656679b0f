from ui.lessons import blocks
from ui.views import frame, pickers, steps


@frame.page
def page(ctx):
    frame.intro(ctx, "multihead")
    layer = pickers.layer_picker(ctx, "layer.enc")
    blocks.equations(ctx, f"enc.{layer}.attn")
    steps.flow(ctx, steps.page_steps(ctx, "multihead", f"enc.{layer}.attn"), key="multihead")


page()
