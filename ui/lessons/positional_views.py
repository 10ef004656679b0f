"""The positional page's lessons beyond the steps (issue 19): the encoding over many positions, the similarity of
positions against their distance, PE(pos + k) = R(k) PE(pos) with the numbers, and attention without positions
when the words are reordered. Each is a section (pickers.section_tabs): only the chosen one is drawn."""
import numpy as np
import streamlit as st

from engine import positional as pe
from engine.tokens import split

from ui.core import runs, state as app_state
from ui.core.figures import curves, heatmap
from ui.core.format import bmatrix, fmt, fmt_tex
from ui.core.labels import indices
from ui.views import draw, pickers

POSITIONS = 100  # rows of the tables drawn (pos = 0..99), at most the model's max_len
STARTS = (0, 10, 40)  # the starting positions of the dot-product curves
PAIRS_SHOWN = 4  # the column pairs written out in the rotation tab
PAIR_GAP = r" \\[0.6em] "  # between the pairs' lines
ROUNDING = 1e-9  # weights in [0, 1] reordered without PE differ by rounding (~1e-16) only, unless not finite


def sections():
    """The page's tabs after the steps: {label key: draw(ctx)}."""
    return {"pos.tab.table": _table, "pos.tab.similarity": _similarity, "pos.tab.rotation": _rotation,
            "pos.tab.order": _order}


def _model_table(ctx):
    """The model's encoding over positions 0..n-1 (its setting, its learned table if it has one): (n, d_model)."""
    c = ctx.config
    n = min(POSITIONS, c.max_len)
    return pe.positional_encoding(c.pos_encoding, n, c.d_model, ctx.model.params.get("pos.learned"))


def _setting(ctx) -> str:
    return ctx.t(f"choice.{ctx.config.pos_encoding}")


def _table(ctx):
    table = _model_table(ctx)
    n, d = table.shape
    st.markdown(ctx.t("pos.table.text", last=n - 1, d_model=d, setting=_setting(ctx)))
    draw.plot(ctx, heatmap(table, _pos_labels(n), indices(d), digits=ctx.state.digits, scale=draw.type_scale(ctx)),
              "pos.table.chart")
    shown, columns = sorted({0, 1, 2 * (d // 4), d - 1}), indices(d)
    st.markdown(ctx.t(f"pos.waves.text.{ctx.config.pos_encoding}",
                      columns=ctx.t("list.separator").join(columns[j] for j in shown)))
    draw.plot(ctx, curves(range(n), {f"{ctx.t('view.col')} {columns[j]}": table[:, j] for j in shown},
                     ctx.t("pos.axis.position"), ctx.t("pos.axis.value")), "pos.waves.chart")


def _pos_labels(n) -> list[str]:
    """Rows of the encoding's tables, by the paper's formula's pos (from 0), named so: not positions (from 1)."""
    return [f"pos = {p}" for p in range(n)]


def _similarity(ctx):
    table = _model_table(ctx)
    n = table.shape[0]
    st.markdown(ctx.t("pos.similarity.text", last=n - 1, setting=_setting(ctx)))
    labels = _pos_labels(n)
    draw.plot(ctx, heatmap(pe.position_similarity(table), labels, labels, digits=ctx.state.digits,
                      scale=draw.type_scale(ctx)), "pos.similarity.chart")
    by_distance = pe.dot_by_distance(table, [s for s in STARTS if s < n])
    st.markdown(ctx.t("pos.distance.text"))
    draw.plot(ctx, curves(range(n), {f"pos = {s}": curve for s, curve in by_distance.items()},
                     ctx.t("pos.axis.distance"), ctx.t("pos.axis.dot")), "pos.distance.chart")


def _rotation(ctx):
    table = _paper_pairs(ctx, _model_table(ctx))
    n, d = table.shape
    draw.text_and_formula(ctx.t("pos.rotation.text"), pe.ROTATION_TEX)
    if d < 2 or n < 2:
        st.caption(ctx.t("pos.rotation.narrow"))
        return
    row = st.container(horizontal=True, gap="medium")
    pos = row.slider("pos", 0, n - 2, 0, key="pos.rotation.pos")
    k = row.slider("k", 1, n - 1 - pos, 1, key="pos.rotation.k") if n - 1 - pos > 1 else 1
    moved = pe.rotated(table, pos, k)  # (2 (d_model // 2),)
    draw.latex(PAIR_GAP.join(_pair_line(ctx, table, pos, k, moved, i) for i in range(min(d // 2, PAIRS_SHOWN))))
    gap = fmt(pe.rotation_gap(table, pos, k), 2)
    st.markdown(ctx.t(f"pos.rotation.{ctx.config.pos_encoding}", gap=gap, pairs=d // 2))


def _paper_pairs(ctx, table):
    """Marian's sines-then-cosines put back in the paper's (sin, cos) pairs, the pairs the rotation turns; any other
    encoding as it is."""
    if ctx.config.pos_encoding == "sinusoidal_halves":
        return table[:, np.argsort(pe.halves_order(table.shape[1]))]  # (n, d_model)
    return table


def _pair_line(ctx, table, pos, k, moved, i) -> str:
    """Pair i: PE(pos + k) of the table, and under it R_i(k) PE(pos) in numbers (two lines: one is too wide for
    the page with d_model = 512's frequencies)."""
    digits, cols = ctx.state.digits, slice(2 * i, 2 * i + 2)
    omega = fmt_tex(pe.frequencies(table.shape[1])[i], digits)
    column = lambda values: bmatrix(values[:, None], digits)
    pair = lambda p: rf"\begin{{bmatrix}} PE_{{{p},{2 * i}}} \\ PE_{{{p},{2 * i + 1}}} \end{{bmatrix}}"
    return (rf"i = {i},\ \omega_{i} = {omega}:\quad {pair(pos + k)} = {column(table[pos + k, cols])} \\ "
            rf"R_{i}({k})\,{pair(pos)} = {bmatrix(pe.pair_rotations(k, table.shape[1])[i], digits)}"
            rf"{column(table[pos, cols])} = {column(moved[cols])}")


@st.cache_resource(max_entries=8, show_spinner=False, hash_funcs=app_state.CACHE_HASH)
def _reordered(model_key):
    """The sentence and its reversal run without positional encoding, and the reversal with the model's."""
    model = runs.run_model(model_key)
    backwards = " ".join(reversed(split(model_key.src)))
    bare = model.without_positions()
    return bare.run(model_key.src), bare.run(backwards), model.run(backwards)


def _order(ctx):
    if ctx.config.decoder_only:
        st.markdown(ctx.t("pos.order.causal"))
        return
    before, after, with_pe = _reordered(ctx.state.model_key)
    st.markdown(ctx.t("pos.order.text"))
    head = pickers.head_picker(ctx, "pos.order.head")
    name = "enc.0.attn.weights"
    for trace, key in ((before, "before"), (after, "after")):  # one above the other: half the page cramps numbers
        tokens = list(trace.src_tokens)
        st.caption(ctx.t(f"pos.order.{key}", sentence=" ".join(tokens)))
        draw.plot(ctx, heatmap(trace[name][head], tokens, tokens, digits=ctx.state.digits, scale=draw.type_scale(ctx)),
                  f"pos.order.{key}.chart", width=draw.chart_width(len(tokens)))
    order = list(range(len(before.src_tokens)))[::-1]
    gap = pe.permutation_gap(before[name], after[name], order)
    moved = pe.permutation_gap(ctx.trace[name], with_pe[name], order)
    same = gap <= ROUNDING  # False for NaN: weights that are not numbers cannot be compared
    st.markdown(ctx.t("pos.order.same" if same else "pos.order.nonfinite", gap=fmt(gap, 2),
                      layers=ctx.config.depth("enc")))
    st.markdown(ctx.t("pos.order.with_pe", setting=_setting(ctx), gap=fmt(moved, 2)))
