import streamlit as st

from ui.core.format import arrow
from ui.core.labels import input_side, input_tokens
from ui.lessons import embedding_views
from ui.views import frame, pickers, steps


def lookup(ctx):
    if ctx.state.model:  # a real translator's SentencePiece pieces
        embedding_views.pieces(ctx)
        steps.step(ctx, "src.embed")
        return
    tokens, ids = input_tokens(ctx.trace)
    st.subheader(ctx.t("tokens.table"))
    st.dataframe(arrow({
        ctx.t("tokens.token"): tokens,
        ctx.t("tokens.id"): ids,
        ctx.t("tokens.known"): [ctx.t("tokens.no" if t in ctx.model.new_words else "tokens.yes") for t in tokens],
    }), hide_index=True)
    embedding_views.case_note(ctx)
    steps.step(ctx, f"{input_side(ctx.config)}.embed")


@frame.page
def page(ctx):
    frame.intro(ctx, "tokens")
    pickers.section_tabs(ctx, {"tokens.tab.lookup": lookup, **embedding_views.sections()}, "tokens.tab", link="section")


page()
