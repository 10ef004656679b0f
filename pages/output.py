import streamlit as st

from ui import context, views
from ui.figures import bars
from ui.labels import top_heading, top_tokens


@views.page
def page():
    ctx = context.get()
    views.intro("output")
    trace = ctx.trace
    views.flow(["logits", "vocab_mask", "masked_logits", "probs"], key="output")
    st.subheader(top_heading(ctx.t, "output.top", len(ctx.model.vocab)))
    positions = list(range(len(trace.tgt_tokens)))
    position = st.selectbox(ctx.t("output.position"), positions, index=positions[-1],
                            format_func=lambda i: f"{i}: {trace.tgt_tokens[i]}", key="output.position")
    ranked = top_tokens(trace["probs"][position], ctx.model.vocab.tokens)
    views.plot(bars([t for t, _ in ranked], [p for _, p in ranked], highlight=ranked[0][0], digits=ctx.state.digits),
               "output.bars")


page()
