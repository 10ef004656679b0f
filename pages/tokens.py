import streamlit as st

from ui.core import session
from ui.core.format import arrow
from ui.lessons import embedding_views
from ui.views import frame, pickers, steps


def lookup():
    ctx = session.get()
    trace = ctx.trace
    st.subheader(ctx.t("tokens.table"))
    st.dataframe(arrow({
        ctx.t("tokens.token"): trace.src_tokens,
        ctx.t("tokens.id"): trace.src_ids,
        ctx.t("tokens.known"): [ctx.t("tokens.no" if t in ctx.model.new_words else "tokens.yes")
                                for t in trace.src_tokens],
    }), hide_index=True)
    steps.step("src.embed")


@frame.page
def page():
    frame.intro("tokens")
    pickers.section_tabs({"tokens.tab.lookup": lookup, **embedding_views.sections()}, "tokens.tab", link="section")


page()
