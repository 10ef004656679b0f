from ui import blocks, views


@views.page
def page():
    views.intro("attention")
    layer = views.layer_picker("layer.enc")
    block = f"enc.{layer}.attn"
    blocks.equations(block)
    for head in views.head_tabs(f"heads.attention.{layer}"):
        views.edit_param(f"{block}.W_Q", head=head, one_cell=True)
        views.edit_param(f"{block}.W_K", head=head, one_cell=True)
        views.flow([f"{block}.{kind}" for kind in ("scores", "scaled", "weights", "heads")], head, key="attention")


page()
