import streamlit as st

from ui import views


@st.fragment  # the page's own widgets rerun the page alone (see ui.context.get)
def page():
    views.intro("qkv")
    layer = views.layer_picker("layer.enc")
    block = f"enc.{layer}.attn"
    for head in views.head_tabs(f"heads.qkv.{layer}"):
        views.flow([f"{block}.{kind}" for kind in ("q", "k", "v")], head, key="qkv")


page()
