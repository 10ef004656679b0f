"""Batches and padding (a section of the training page): the page's sentence pair and two of the corpus's padded side by
side into one batch, the decoder's causal mask, the padding mask and their sum, and the weights padded keys get;
then, recorded, training on padded batches against the loop over the pairs."""
import functools
import json
from pathlib import Path

import numpy as np
import streamlit as st

from engine import attention as att
from engine import layers
from engine.corpus import CORPORA, pairs
from engine.presets import with_words
from engine.train import BATCH_MEAN_TEX

from ui.core.figures import curves, heatmap
from ui.core.format import arrow, fmt
from ui.core.labels import indices
from ui.core.runs import run_model
from ui.core.state import CACHE_HASH
from ui.views import draw, pickers

EXAMPLES = tuple(pairs("en-es")[i] for i in (12, 6))  # the cat sat on the mat (7 + 8 tokens), thank you (2 + 2)
BLOCK = "dec.0.self_attn"  # the attention block whose masks and weights are shown
RECORD = Path(__file__).parents[1] / "data" / "padded_training.json"  # `bench/train_bench.py --record` writes it
RUNS = ("padded", "per_pair", "nudged")  # the record's three trainings of each corpus


@st.cache_resource(max_entries=16, show_spinner=False, hash_funcs=CACHE_HASH)
def _batch(model_key):
    """The page's sentence pair and the examples run as one padded batch, and the page's pair alone, on the page's
    model with the words its vocabulary lacks added (the hello-world vocabulary has few)."""
    pairs = ((model_key.src, model_key.tgt or ""),) + EXAMPLES
    model = with_words(run_model(model_key), *(text for pair in pairs for text in pair))
    return model.run_batch(pairs), model.run(*pairs[0])


def padding(ctx):
    trace, alone = _batch(ctx.state.model_key)
    st.markdown(ctx.t("batch.intro"))
    for side in ("src", "tgt"):
        tokens = getattr(trace, f"{side}_tokens")
        st.dataframe(arrow({ctx.t(f"batch.{side}"): indices(len(tokens)),
                            **{label: [row[i] for row in tokens] for i, label in enumerate(indices(len(tokens[0])))}}),
                     hide_index=True)
    st.caption(ctx.t("batch.shapes", q=_shape(trace[f"{BLOCK}.q"]), weights=_shape(trace[f"{BLOCK}.weights"]),
                     pad=_shape(trace["tgt.pad_mask"])))
    numbers = indices(len(tokens))
    sentence = pickers.choice(ctx, "batch.sentence", ctx.t("batch.sentence"), list(range(len(tokens))),
                              numbers.__getitem__, link="sentence")
    labels = list(trace.tgt_tokens[sentence])
    n = len(labels)
    pad = trace["tgt.pad_mask"][sentence, 0]  # (1, n): one row, broadcast over the queries
    masks = {"batch.causal": (att.MASK_TEX, att.causal_mask(n)),
             "batch.pad": (att.PAD_MASK_TEX, np.broadcast_to(pad, (n, n))),
             "batch.sum": (att.CAUSAL_PAD_MASK_TEX, trace[f"{BLOCK}.mask"][sentence, 0])}
    for key, (tex, matrix) in masks.items():
        st.markdown(f"**{ctx.t(key)}**")
        draw.latex(ctx.t.words(tex))
        _heatmap(ctx, matrix, labels, key)
    st.markdown(f"**{ctx.t('batch.weights')}**")
    _heatmap(ctx, trace[f"{BLOCK}.weights"][sentence, 0], labels, "batch.weights")
    difference = layers.largest_difference_alone(trace, alone, 0, "dec.out")
    st.caption(ctx.t("batch.alone", difference=fmt(difference, 2)))
    st.caption(ctx.t("batch.minus_1e9"))
    box = st.expander(ctx.t("batch.vs_loop"), key="batch.vs_loop", on_change="rerun")
    if box.open:  # drawn only while open
        with box:
            against_the_loop(ctx, training_record())


@functools.cache
def training_record() -> dict:
    """Each corpus trained three ways with the default settings (bench/train_bench.py): on padded batches, with the
    loop over the pairs, and on padded batches from weights one of which is nudged by one unit in the last place."""
    return json.loads(RECORD.read_text(encoding="utf-8"))


def against_the_loop(ctx, record):
    st.markdown(ctx.t("batch.vs_loop_intro", nudged=f"`{record['nudged']}`"))
    draw.latex(BATCH_MEAN_TEX)
    names = {corpus: ctx.t(f"train.corpus.{corpus}") for corpus in CORPORA}
    st.table(arrow({"": _comparison_rows(ctx, record), **{names[corpus]: _comparison_column(record, runs)
                                                           for corpus, runs in record["corpora"].items()}}),
             hide_index=True)
    for corpus, runs in record["corpora"].items():
        losses = {run: np.asarray(runs[run]["losses"]) for run in RUNS}
        series = {**{ctx.t(f"batch.run.{run}"): losses[run] for run in RUNS[:2]},
                  **{ctx.t(f"batch.gap.{run}"): np.abs(losses[run] - losses["padded"]) for run in RUNS[1:]}}
        st.markdown(f"**{names[corpus]}**")
        draw.plot(ctx, curves(range(1, len(losses["padded"]) + 1), series, ctx.t("train.step"), ctx.t("batch.axis"),
                         log_y=True), f"batch.vs_loop.{corpus}")
    st.markdown(reading(ctx, record))
    settings = ", ".join(f"{name} = {value}" for name, value in record["settings"].items())
    st.caption(ctx.t("batch.vs_loop_source", measured=record["measured"], commit=record["commit"],
                     machine=record["machine"], settings=settings))


def reading(ctx, record) -> str:
    """How to read the charts, as this record has it: the trainings on one line all along (and how close), or the
    step where one first parts from the padded batches' (record["agree_until"], each run's)."""
    steps = record["settings"]["steps"]
    parted = min(until for runs in record["corpora"].values() for until in runs["agree_until"].values())
    if parted < steps:
        return ctx.t("batch.vs_loop_read.parted", step=parted + 1)
    gaps = {run: max(float(np.max(np.abs(np.asarray(runs[run]["losses"]) - runs["padded"]["losses"])))
                     for runs in record["corpora"].values()) for run in RUNS[1:]}
    return ctx.t("batch.vs_loop_read.together", steps=steps, gap=fmt(gaps["per_pair"], 2),
                 nudged=fmt(gaps["nudged"], 2))


def _comparison_rows(ctx, record) -> list:
    runs = {run: ctx.t(f"batch.run.{run}") for run in RUNS}
    return ([ctx.t("batch.row.speed", run=runs[run]) for run in RUNS[:2]] + [ctx.t("batch.row.speedup")]
            + [ctx.t("batch.row.loss", run=runs[run]) for run in RUNS]
            + [ctx.t("batch.row.agree", run=runs[run], agree=fmt(record["agree"], 1)) for run in RUNS[1:]]
            + [ctx.t("batch.row.exact", run=runs[run]) for run in RUNS])


def _comparison_column(record, runs) -> list:
    """One corpus's figures, in the order of _comparison_rows."""
    return ([f"{runs[run]['steps_per_second']:.1f}" for run in RUNS[:2]] + [f"{runs['speedup']:.1f}×"]
            + [fmt(runs[run]["corpus_loss"], 3) for run in RUNS]
            + [f"{runs['agree_until'][run]} / {len(runs[run]['losses'])}" for run in RUNS[1:]]
            + [f"{runs[run]['exact']} / {runs[run]['pairs']}" for run in RUNS])


def _shape(value) -> str:
    return "[" + ", ".join(map(str, value.shape)) + "]"


def _heatmap(ctx, matrix, labels, key):
    chart = heatmap(matrix, labels, labels, digits=ctx.state.digits)
    draw.plot(ctx, chart, key, width=draw.chart_width(len(labels)))
