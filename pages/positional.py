import streamlit as st

from ui import views


@st.fragment  # the page's own widgets rerun the page alone (see ui.context.get)
def page():
    views.intro("positional")
    views.flow(["src.embed", "src.pos", "src.input"], key="positional", focus="src.pos")


page()
