import streamlit as st

from ui import context, views
from ui.format import arrow


@views.page
def page():
    ctx = context.get()
    views.intro("tokens")
    trace = ctx.trace
    st.subheader(ctx.t("tokens.table"))
    st.dataframe(arrow({
        ctx.t("tokens.token"): trace.src_tokens,
        ctx.t("tokens.id"): trace.src_ids,
        ctx.t("tokens.known"): [ctx.t("tokens.no" if t in ctx.model.new_words else "tokens.yes")
                                for t in trace.src_tokens],
    }), hide_index=True)
    views.step("src.embed")


page()
