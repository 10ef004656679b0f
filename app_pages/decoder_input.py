import streamlit as st

from ui.core.format import arrow
from ui.views import frame, steps


@frame.page
def page(ctx):
    frame.intro(ctx, "decoder_input")
    trace = ctx.trace
    st.dataframe(arrow({ctx.t("tokens.token"): trace.tgt_tokens, ctx.t("tokens.id"): trace.tgt_ids}), hide_index=True)
    steps.flow(ctx, steps.page_steps(ctx, "decoder_input", "tgt"), key="decoder_input")


page()
