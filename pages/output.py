import streamlit as st

from ui.core import session
from ui.core.figures import bars
from ui.core.labels import top_heading, top_tokens
from ui.views import draw, frame, steps


@frame.page
def page():
    ctx = session.get()
    frame.intro("output")
    trace = ctx.trace
    steps.flow(steps.page_steps("output", ""), key="output")
    st.subheader(top_heading(ctx.t, "output.top", len(ctx.model.vocab)))
    positions = list(range(len(trace.tgt_tokens)))
    position = st.selectbox(ctx.t("output.position"), positions, index=positions[-1],
                            format_func=lambda i: f"{i}: {trace.tgt_tokens[i]}", key="output.position")
    ranked = top_tokens(trace["probs"][position], ctx.model.vocab.tokens)
    draw.plot(bars([t for t, _ in ranked], [p for _, p in ranked], highlight=ranked[0][0], digits=ctx.state.digits),
              "output.bars")


page()
