"""Entry point: `streamlit run app.py`. Builds the state and the trace, then runs the chosen page."""
import streamlit as st

from ui import context, server

server.configure()  # the process's settings, on the first run only

st.set_page_config(page_title="Transformer, step by step", page_icon="🔢", layout="wide")
ctx = context.build()
if ctx.state.present:  # presenter mode: the page has the whole screen
    st.set_page_config(initial_sidebar_state="collapsed")
st.navigation(context.navigation(ctx.t), expanded=True).run()
