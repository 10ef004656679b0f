from ui import views


@views.page
def page():
    views.intro("cross_attention")
    layer = views.layer_picker("layer.dec")
    block = f"dec.{layer}.cross_attn"
    for head in views.head_tabs(f"heads.cross.{layer}"):
        views.flow([f"{block}.{kind}" for kind in ("q", "k", "v", "scores", "weights", "heads", "out")], head,
                   key="cross")  # out: all heads through W^O, a step of the flow (one step is drawn at a time)


page()
