from ui.lessons import blocks, derivation_views
from ui.views import frame, pickers, steps


@frame.page
def page(ctx):
    frame.intro(ctx, "attention")
    layer = pickers.layer_picker(ctx, "layer.enc")
    block = f"enc.{layer}.attn"
    blocks.equations(ctx, block)
    head = pickers.head_picker(ctx, f"heads.attention.{layer}")
    steps.flow(ctx, steps.page_steps(ctx, "attention", block), head, key="attention",
               edits=(f"{block}.W_Q", f"{block}.W_K"))  # the scores' Q and K come from these
    derivation_views.softmax(ctx)


page()
