from ui import views


@views.page
def page():
    views.intro("masked_attention")
    layer = views.layer_picker("layer.dec")
    block = f"dec.{layer}.self_attn"
    for head in views.head_tabs(f"heads.masked.{layer}"):
        views.edit_param(f"{block}.W_Q", head=head)
        views.edit_param(f"{block}.W_K", head=head)
        views.flow([f"{block}.{kind}" for kind in ("mask", "scaled", "masked", "weights", "heads", "out")], head,
                   key="masked", focus=f"{block}.masked")  # the mask and W^O's output (all heads) are steps too


page()
