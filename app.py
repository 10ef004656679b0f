"""Entry point: `streamlit run app.py`. Builds the state and the trace, then runs the chosen page."""
import streamlit as st

from ui import context, server

server.configure()  # the process's settings, on the first run only

st.set_page_config(page_title="Transformer, step by step", page_icon="🔢", layout="wide")
ctx = context.build()
st.navigation(context.navigation(ctx.t), expanded=True).run()
