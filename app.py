"""Entry point: `streamlit run app.py`. Builds the state and the trace, then runs the chosen page."""
import streamlit as st

from ui import context
from ui.navigation import PAGES, page_file


HOME = "overview"  # the page at "/"


def sections(t) -> dict:
    """The navigation's pages by section, made once per session and language (making them costs each rerun ~1 ms)."""
    key = f"navigation.{t.lang}"
    if key not in st.session_state:
        st.session_state[key] = {t(f"section.{section}"): [entry for page in pages for entry in _pages(t, page)]
                                 for section, pages in PAGES.items()}
    return st.session_state[key]


def _pages(t, page) -> list:
    """A page's navigation entry. Streamlit serves the default page at "/" only, never at its own name, so /overview
    was "Page not found": a hidden second entry of the same file answers there."""
    title = t(f"page.{page}")
    if page != HOME:
        return [st.Page(page_file(page), title=title, url_path=page)]
    return [st.Page(page_file(page), title=title, url_path="home", default=True),  # "home" is reserved, not served
            st.Page(page_file(page), title=title, url_path=page, visibility="hidden")]


st.set_page_config(page_title="Transformer, step by step", page_icon="🔢", layout="wide")
ctx = context.build()
st.navigation(sections(ctx.t), expanded=True).run()
