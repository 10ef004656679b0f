"""Entry point: `streamlit run app.py`. Builds the state and the trace, then runs the chosen page."""
import streamlit as st

from ui import context
from ui.navigation import PAGES, page_file


def sections(t) -> dict:
    """The navigation's pages by section, made once per session and language (making them costs each rerun ~1 ms)."""
    key = f"navigation.{t.lang}"
    if key not in st.session_state:
        st.session_state[key] = {
            t(f"section.{section}"): [
                st.Page(page_file(page), title=t(f"page.{page}"), url_path=page, default=page == "overview")
                for page in pages]
            for section, pages in PAGES.items()
        }
    return st.session_state[key]


st.set_page_config(page_title="Transformer, step by step", page_icon="🔢", layout="wide")
ctx = context.build()
st.navigation(sections(ctx.t), expanded=True).run()
