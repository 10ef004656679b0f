import streamlit as st

from ui.core.figures import bars
from ui.core.labels import FIRST, top_heading, top_tokens
from ui.views import draw, frame, steps
from ui.views.drawn import restore_from_link, show_in_link


@frame.page
def page(ctx):
    frame.intro(ctx, "output")
    trace = ctx.trace
    steps.flow(ctx, steps.page_steps(ctx, "output", ""), key="output")
    st.subheader(top_heading(ctx.t, "output.top", len(ctx.model.vocab)))
    positions = list(range(len(trace.tgt_tokens)))
    restore_from_link(ctx.t, "output.position", "position", positions, default=positions[-1])
    position = st.selectbox(ctx.t("output.position"), positions, index=positions[-1],
                            format_func=lambda i: f"{i + FIRST}: {trace.tgt_tokens[i]}", key="output.position")
    show_in_link("position", position, positions[-1])
    ranked = top_tokens(trace["probs"][position], ctx.model.vocab.tokens)
    draw.plot(ctx, bars([t for t, _ in ranked], [p for _, p in ranked], highlight=ranked[0][0],
                        digits=ctx.state.digits), "output.bars")


page()
