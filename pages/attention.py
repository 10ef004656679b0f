from ui import blocks, derivation_views, views


@views.page
def page():
    views.intro("attention")
    layer = views.layer_picker("layer.enc")
    block = f"enc.{layer}.attn"
    blocks.equations(block)
    head = views.head_picker(f"heads.attention.{layer}")
    views.flow([f"{block}.{kind}" for kind in ("scores", "scaled", "weights", "heads")], head, key="attention",
               edits=(f"{block}.W_Q", f"{block}.W_K"))  # the scores' Q and K come from these
    derivation_views.softmax()


page()
