import streamlit as st

from ui import context, embedding_views, views
from ui.format import arrow


def lookup():
    ctx = context.get()
    trace = ctx.trace
    st.subheader(ctx.t("tokens.table"))
    st.dataframe(arrow({
        ctx.t("tokens.token"): trace.src_tokens,
        ctx.t("tokens.id"): trace.src_ids,
        ctx.t("tokens.known"): [ctx.t("tokens.no" if t in ctx.model.new_words else "tokens.yes")
                                for t in trace.src_tokens],
    }), hide_index=True)
    views.step("src.embed")


@views.page
def page():
    views.intro("tokens")
    views.section_tabs({"tokens.tab.lookup": lookup, **embedding_views.sections()}, "tokens.tab", link="section")


page()
