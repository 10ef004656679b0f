from ui import context, views

ctx = context.get()
views.intro("cross_attention")
layer = views.layer_picker("layer.dec")
block = f"dec.{layer}.cross_attn"
for head in views.head_tabs(f"heads.cross.{layer}"):
    for kind in ("q", "k", "v", "scores", "weights", "heads"):
        views.step(f"{block}.{kind}", head)
views.step(f"{block}.out")
