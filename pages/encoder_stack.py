import streamlit as st

from ui import context, views


@st.fragment  # the page's own widgets rerun the page alone (see ui.context.get)
def page():
    ctx = context.get()
    views.intro("encoder_stack")
    last = "ln2" if ctx.config.norm_placement == "post" else "add2"
    for layer in range(ctx.config.n_layers):
        st.subheader(ctx.t("stack.layer_output", l=layer))
        views.step(f"enc.{layer}.{last}", drill=False)
    views.step("enc.out")


page()
