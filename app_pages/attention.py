from ui.lessons import blocks, derivation_views
from ui.views import frame, pickers, steps


@frame.page
def page(ctx):
    frame.intro(ctx, "attention")
    layer = pickers.layer_picker("layer.enc")
    block = f"enc.{layer}.attn"
    blocks.equations(ctx, block)
    head = pickers.head_picker(f"heads.attention.{layer}")
    steps.flow(steps.page_steps("attention", block), head, key="attention",
               edits=(f"{block}.W_Q", f"{block}.W_K"))  # the scores' Q and K come from these
    derivation_views.softmax()


page()
