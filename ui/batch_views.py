"""Batches and padding (a tab of the training page): the page's sentence pair and two of the corpus's padded side by
side into one batch, the decoder's causal mask, the padding mask and their sum, and the weights padded keys get."""
import numpy as np
import streamlit as st

from engine import attention as att
from engine import layers
from engine.corpus import pairs
from engine.presets import with_words

from . import context, views
from .blocks import _choice
from .figures import heatmap
from .format import arrow, fmt
from .state import CACHE_HASH

EXAMPLES = tuple(pairs("en-es")[i] for i in (12, 6))  # the cat sat on the mat (7 + 8 tokens), thank you (2 + 2)
BLOCK = "dec.0.self_attn"  # the attention block whose masks and weights are shown


@st.cache_resource(max_entries=16, show_spinner=False, hash_funcs=CACHE_HASH)
def _batch(model_key):
    """The page's sentence pair and the examples run as one padded batch, and the page's pair alone, on the page's
    model with the words its vocabulary lacks added (the hello-world vocabulary has few)."""
    pairs = ((model_key.src, model_key.tgt or ""),) + EXAMPLES
    model = with_words(context.run_model(model_key), *(text for pair in pairs for text in pair))
    return model.run_batch(pairs), model.run(*pairs[0])


def padding():
    ctx = context.get()
    trace, alone = _batch(ctx.state.model_key)
    st.markdown(ctx.t("batch.intro"))
    for side in ("src", "tgt"):
        tokens = getattr(trace, f"{side}_tokens")
        st.dataframe(arrow({ctx.t(f"batch.{side}"): [str(b + 1) for b in range(len(tokens))],
                            **{str(i): [row[i] for row in tokens] for i in range(len(tokens[0]))}}), hide_index=True)
    st.caption(ctx.t("batch.shapes", q=_shape(trace[f"{BLOCK}.q"]), weights=_shape(trace[f"{BLOCK}.weights"]),
                     pad=_shape(trace["tgt.pad_mask"])))
    sentence = _choice("batch.sentence", ctx.t("batch.sentence"), list(range(len(tokens))), lambda b: str(b + 1))
    labels = list(trace.tgt_tokens[sentence])
    n = len(labels)
    pad = trace["tgt.pad_mask"][sentence, 0]  # (1, n): one row, broadcast over the queries
    masks = {"batch.causal": (att.MASK_TEX, att.causal_mask(n)),
             "batch.pad": (att.PAD_MASK_TEX, np.broadcast_to(pad, (n, n))),
             "batch.sum": (att.CAUSAL_PAD_MASK_TEX, trace[f"{BLOCK}.mask"][sentence, 0])}
    for key, (tex, matrix) in masks.items():
        st.markdown(f"**{ctx.t(key)}**")
        views.latex(ctx.t.words(tex))
        _heatmap(ctx, matrix, labels, key)
    st.markdown(f"**{ctx.t('batch.weights')}**")
    _heatmap(ctx, trace[f"{BLOCK}.weights"][sentence, 0], labels, "batch.weights")
    difference = layers.largest_difference_alone(trace, alone, 0, "dec.out")
    st.caption(ctx.t("batch.alone", difference=fmt(difference, 2)))
    st.caption(ctx.t("batch.minus_1e9"))


def _shape(value) -> str:
    return "[" + ", ".join(map(str, value.shape)) + "]"


def _heatmap(ctx, matrix, labels, key):
    chart = heatmap(matrix, labels, labels, digits=ctx.state.digits)
    st.plotly_chart(chart, key=key, config={"displayModeBar": False}, width=views.chart_width(len(labels)))
