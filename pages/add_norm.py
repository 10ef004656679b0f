import streamlit as st

from ui import context, views


@views.page
def page():
    ctx = context.get()
    views.intro("add_norm")
    layer = views.layer_picker("layer.enc")
    sublayer = st.segmented_control(ctx.t("view.input"), [1, 2], default=1, required=True, key="add_norm.sublayer",
                                    format_func=lambda k: ctx.t("page.attention" if k == 1 else "page.ffn")) or 1
    order = ("add", "ln") if ctx.config.norm_placement == "post" else ("ln", "add")
    views.flow([f"enc.{layer}.{kind}{sublayer}" for kind in order], key=f"add_norm.{sublayer}",
               focus=f"enc.{layer}.ln{sublayer}")


page()
