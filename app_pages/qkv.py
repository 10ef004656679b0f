from ui.lessons import blocks, derivation_views
from ui.views import frame, pickers, steps


@frame.page
def page(ctx):
    frame.intro(ctx, "qkv")
    layer = pickers.layer_picker(ctx, "layer.enc")
    block = f"enc.{layer}.attn"
    head = pickers.head_picker(ctx, f"heads.qkv.{layer}")
    blocks.weights_side_by_side(ctx, block, head)
    steps.flow(ctx, steps.page_steps(ctx, "qkv", block), head, key="qkv")
    derivation_views.qkv(ctx, block, head)


page()
