import streamlit as st

from ui import views


@st.fragment  # the page's own widgets rerun the page alone (see ui.context.get)
def page():
    views.intro("ffn")
    layer = views.layer_picker("layer.enc")
    views.flow([f"enc.{layer}.ffn.{kind}" for kind in ("hidden", "act", "out")], key="ffn")


page()
