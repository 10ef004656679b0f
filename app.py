"""Entry point: `streamlit run app.py`. Builds the state and the trace, then runs the chosen page."""
import streamlit as st

from ui import context
from ui.navigation import PAGES, page_file

st.set_page_config(page_title="Transformer, step by step", page_icon="🔢", layout="wide")
ctx = context.build()
navigation = st.navigation({
    ctx.t(f"section.{section}"): [
        st.Page(page_file(page), title=ctx.t(f"page.{page}"), url_path=page, default=page == "overview")
        for page in pages]
    for section, pages in PAGES.items()
}, expanded=True)
navigation.run()
