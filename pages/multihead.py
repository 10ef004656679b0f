import streamlit as st

from ui import views


@st.fragment  # the page's own widgets rerun the page alone (see ui.context.get)
def page():
    views.intro("multihead")
    layer = views.layer_picker("layer.enc")
    views.flow([f"enc.{layer}.attn.concat", f"enc.{layer}.attn.out"], key="multihead")


page()
