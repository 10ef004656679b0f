import streamlit as st

from ui import context, views


@views.page
def page():
    ctx = context.get()
    views.intro("encoder_stack")
    last = "ln2" if ctx.config.norm_placement == "post" else "add2"
    for layer in range(ctx.config.n_layers):
        st.subheader(ctx.t("stack.layer_output", l=layer + 1))  # layers are numbered from 1, steps from 0
        views.step(f"enc.{layer}.{last}", drill=False)
    views.step("enc.out")


page()
