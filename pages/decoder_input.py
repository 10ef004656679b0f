import streamlit as st

from ui import context, views
from ui.format import arrow


@views.page
def page():
    ctx = context.get()
    views.intro("decoder_input")
    trace = ctx.trace
    st.dataframe(arrow({ctx.t("tokens.token"): trace.tgt_tokens, ctx.t("tokens.id"): trace.tgt_ids}), hide_index=True)
    views.flow([f"tgt.{kind}" for kind in ("embed", "pos", "input")], key="decoder_input")


page()
