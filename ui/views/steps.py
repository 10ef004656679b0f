"""A step page's steps: a flow of steps (their matrices at a glance, a button per step) and one step (its name,
formula and shape, where it departs from the paper, its parameters' editors, numbers, heatmap, its difference from
the unedited model and its drill-down). They only display the trace; the engine did the arithmetic."""
from __future__ import annotations

import numpy as np
import streamlit as st

from ui.core import departures, runs, session_store, sidebar
from ui.core.figures import heatmap, writes_numbers
from ui.core.format import bmatrix, difference, fmt, printed_width
from ui.core.labels import description_key, param_key, step_axes, step_name_key, step_tex
from ui.core.navigation import flow_leaves
from ui.views.draw import (LATEX_CELLS, TABLE_COLS, as_table, chart_width, drawing, head_matrix, latex, numbers, plot,
                           text_and_formula, type_scale)
from ui.views.drawn import current, from_link, show_in_link
from ui.views.drill import drill_down, on_click, selection
from ui.views.editors import edit_param
from ui.views import vocabulary
from ui.views.pickers import picker

COMPARE = "compare"  # session_state: the learner compares with the unedited model (the toggle view.compare shows it)
OUTLINED_CELLS = 64  # a difference heatmap outlines its changed cells up to this many (beyond, the colours show them)
GLANCE_COLS = 6  # a flow writes its matrices out (at a glance) when none is wider than this
GLANCE_PAIR_WIDTH = 24  # ... two to a row when none is wider than this many characters of numbers (1280 px page)
GLANCE_GAP = r" \\ \\ "  # an empty line between a glance's lines: KaTeX, like LaTeX, makes \\[1em] a least depth,
# not added space, so the brackets of 3-row matrices touched the next line's


def flow(ctx, names: list[str], head: int | None = None, key: str = "flow", trace=None, edits: tuple = ()):
    """Several steps of a page: their matrices side by side at a glance, then a button per step, of which only
    the chosen one is drawn (formula, heatmap, drill-down), so an edit redraws one chart, not all. It opens on the
    first step, where the flow's lesson starts (docs/ARCHITECTURE.md, "Where a page opens"). trace: another pass than
    the page's (the dropout page's, in training mode). edits: parameters the steps read through earlier steps, whose
    editors the chosen step shows too (see step)."""
    trace = ctx.trace if trace is None else trace  # not `or`: len() of a trace runs the whole pass
    _record_drawn(trace, names)
    matrices = [head_matrix(trace[name], head) for name in names]
    widest = max(m.shape[1] for m in matrices)
    glance = widest <= GLANCE_COLS and all(m.shape[0] <= LATEX_CELLS for m in matrices) and not ctx.state.present
    # (a presenter's screen holds one step, not the flow's every matrix)
    if glance:  # one formula, not one per matrix: each element an edit redraws costs the browser time
        latex(drawing(trace, ("glance", tuple(names), head, ctx.state.digits, ctx.state.lang),
                       lambda: _glance(ctx, trace, names, matrices, head)))
    labels = [f"{i + 1}. {ctx.t(step_name_key(name))}" for i, name in enumerate(names)]
    leaves = [name.rsplit(".", 1)[-1] for name in names]
    asked = from_link(ctx.t, "step", leaves.__contains__, leaves[0])
    if asked is not None:
        session_store.put(f"{key}.{head}", leaves.index(asked))
    chosen = picker(ctx, f"{key}.{head}", ctx.t("view.step"), labels)
    show_in_link("step", leaves[chosen], leaves[0])  # the step's name, the same in every language
    step(ctx, names[chosen], head, show_numbers=not glance, trace=trace, edits=edits)


def page_steps(ctx, page: str, prefix: str) -> list[str]:
    """The names of the steps `page` draws of the block at `prefix` ("enc.0.attn", "src"; "" for the output layer),
    as its block declares them (navigation.FLOWS)."""
    dot = f"{prefix}." if prefix else ""
    return [dot + leaf for leaf in flow_leaves(ctx.config, page)]


def _glance(ctx, trace, names, matrices, head) -> str:
    cells = [f"{_tex_name(ctx.t, trace.step(name), head)} = " + bmatrix(matrix, ctx.state.digits)
             for name, matrix in zip(names, matrices)]
    lines = [r" \qquad ".join(cells[i] for i in line) for line in _glance_lines(matrices, ctx.state.digits)]
    return GLANCE_GAP.join(lines)  # lines as wide as they are


def _glance_lines(matrices, digits) -> list[list[int]]:
    """The matrices' positions line by line: two to a line where both are at most GLANCE_PAIR_WIDTH characters wide,
    else one."""
    narrow = [printed_width(m, digits) <= GLANCE_PAIR_WIDTH for m in matrices]
    lines, i = [], 0
    while i < len(matrices):
        pair = i + 1 < len(matrices) and narrow[i] and narrow[i + 1]
        lines.append([i, i + 1] if pair else [i])
        i += 1 + pair
    return lines


def _record_drawn(trace, names):
    drawn = current()
    if drawn is not None:
        drawn.steps += [(trace, name) for name in names]


def step(ctx, name: str, head: int | None = None, drill: bool = True, show_numbers: bool = True, trace=None,
         edits: tuple = ()):
    """One step of the trace (the page's, or `trace`): its name, formula and shape, editors for the parameters it
    reads (and for `edits`, which it reads through earlier steps), its numbers, heatmap and a cell's arithmetic. On a
    following student's page (Context.reading), no editors (a line says editing needs Follow off), the heatmap takes
    no clicks and the drill-down shows the teacher's cell."""
    trace = ctx.trace if trace is None else trace  # not `or`: len() of a trace runs the whole pass
    _record_drawn(trace, [name])
    s = trace.step(name)
    shape = ctx.t("view.shape", axes=", ".join(s.axes), sizes=", ".join(map(str, s.shape)))  # as declared
    read_only = f"\n\n:gray[:small[{ctx.t('view.read_only')}]]" if ctx.reading and _edited(ctx, s, edits) else ""
    per_head = f" · {ctx.t('view.head')} {head + 1}" if ctx.step_in_view and head is not None and "h" in s.axes else ""
    text_and_formula(f"##### {ctx.t(step_name_key(name))} · {ctx.t(description_key(name))}{per_head}\n\n"
                     f":gray[:small[`{name}` · {shape}]]{read_only}", ctx.t.words(s.formula))  # the code's name: API
    key = f"{name}.{head}"
    shown = vocabulary.columns(ctx, trace, key) if s.axes[-1] == "vocab" and vocabulary.is_long(trace) else None
    below = ctx.state.present  # a presenter's screen: the formula, then its heatmap (projector type is tall); a
    if not below:  # table of its numbers, the departure's note and the editors under them
        paper_form(ctx, (s.kind, name.rsplit(".", 1)[-1]), name)
        _editors(ctx, s, head, edits, shown)
    axes = step_axes(trace, name)
    values = head_matrix(s.value, head)  # (rows, cols)
    rows, cols = (axes[-2], axes[-1]) if s.value.ndim > 1 else ([""], axes[-1])
    if shown is not None:  # a real model's vocabulary: the columns that matter here
        values, cols = values[:, shown], [cols[j] for j in shown]
    selected = selection(ctx.t, key, len(rows), len(cols)) if drill else None  # no drill-down: no cell to mark or click
    scale = type_scale(ctx)
    chart = drawing(trace, ("heatmap", name, head, selected, ctx.state.digits, scale, shown and tuple(shown)),
                    lambda: heatmap(values, rows, cols, selected, digits=ctx.state.digits, scale=scale))
    repeated = writes_numbers(chart) and (as_table(values) or ctx.state.present)  # a table would repeat the cells'
    written = show_numbers and not repeated  # text; a presenter's screen holds the heatmap with its numbers, not both
    if written and not below:
        numbers(ctx, values, rows, cols, label=_tex_name(ctx.t, s, head))
    clicks = drill and not ctx.reading
    plot(ctx, chart, f"chart.{key}", on_select=on_click(key, len(rows), len(cols)) if clicks else "ignore",
         selection_mode="points", width=chart_width(len(cols)))
    if below:
        if written:
            numbers(ctx, values, rows, cols, label=_tex_name(ctx.t, s, head))
        paper_form(ctx, (s.kind, name.rsplit(".", 1)[-1]), name)
        _editors(ctx, s, head, edits, shown)
    comparable = ctx.edits and trace is ctx.trace and not ctx.reading  # comparing: the reader's own choice
    unedited = _compared(ctx, name, head, values, rows, cols, key, shown) if comparable else None
    if drill:
        drill_down(ctx, trace, name, head, key, rows, cols, unedited, shown)


def _editors(ctx, s, head, edits, shown=None):
    """The editors of a step's parameters, under its formula on every page: a weight is edited where the formula it
    enters is written, and what it changes is drawn below. `edits` (read through earlier steps) are edited one
    cell at a time, the lighter widget. An embedding table shows the rows of the sentence's tokens (or of the
    vocabulary's columns `shown`, a long vocabulary's). None on a following student's page."""
    if ctx.reading:
        return
    used_rows = sorted(set(s.meta["ids"])) if s.kind == "embed" else shown
    for ref in _edited(ctx, s, edits):
        per_head = ctx.model.params[ref].ndim == 3 or param_key(ref) in ("b_Q", "b_K", "b_V")
        rows = used_rows if ref.startswith("embed.") and ref not in edits else None
        edit_param(ctx, ref, head=head if per_head else None, rows=rows, one_cell=ref in edits)


def _edited(ctx, s, edits) -> list[str]:
    """The parameters a step's editors edit: those it reads, and `edits`."""
    return [ref for ref in s.inputs if ref in ctx.model.params] + list(edits)


def paper_form(ctx, steps: tuple, key: str):
    """Next to a formula: where the current settings make its steps (kinds or last names, ui.core.departures) depart
    from the paper, what the paper does, and a button per option that sets the paper's value. Each option once per
    page, the options of one place in one box. None on a Vision Transformer's page: its pre-norm, GELU and learned
    positions are the ViT's own (its intro says so), and the buttons would set the text model's options."""
    drawn = current()
    if ctx.vision:
        return
    shown = [d for d in departures.for_steps(steps, ctx.config) if drawn is None or d.field not in drawn.departures]
    if drawn is not None:
        drawn.departures.update(d.field for d in shown)
    if shown:
        _departure_note(ctx, shown, key)


def _departure_note(ctx, shown, key):
    """One box: each departure's sentence (and, for one the paper has no value for here, why no button), then the
    buttons; its elements are sent on every rerun, so the sentences share one. On a following student's page, the
    sentences alone (one element: no box, no buttons)."""
    note, values = st if ctx.reading else st.container(border=True), departures.values(ctx.config)
    settings = [departures.paper_settings(departure, ctx.config) for departure in shown]
    texts = [ctx.t(departures.text_key(departure, ctx.config), **values) + (
        "" if paper is not None else "\n\n" + ctx.t("depart.no_paper_value"))
        for departure, paper in zip(shown, settings)]
    note.markdown(f":orange-badge[{ctx.t('depart.badge')}] " + "\n\n".join(texts))
    if ctx.reading:  # the buttons change the settings: the teacher's on a following student's page
        return
    for departure, paper in zip(shown, settings):
        if paper is not None:
            note.button(ctx.t(f"depart.{departure.field}.button", **values), key=f"paper.{departure.field}.{key}",
                        on_click=sidebar.use_settings, args=(paper,))
    if ctx.state.own_weights and any(paper is not None for paper in settings):
        note.caption(ctx.t("depart.drops_weights"))


def _head_of(value, head):
    """The head a step's matrix belongs to: none for a step all heads share (the causal mask)."""
    return head if value.ndim == 3 else None


def _tex_name(t, step, head):
    """A step's symbol with its head's number (S_1'), or its name in the reader's language."""
    return step_tex(step.symbol, _head_of(step.value, head), t(step_name_key(step.name)))


def _comparing(ctx) -> bool:
    """Whether the reader asks to compare with the unedited model: one toggle per page, above its first step, whose
    answer the session keeps from page to page."""
    drawn = current()
    if drawn is not None and drawn.compare is not None:
        return drawn.compare
    on = st.toggle(ctx.t("view.compare"), value=session_store.get(COMPARE, False), key="view.compare")
    session_store.put(COMPARE, on)
    if drawn is not None:
        drawn.compare = on
    return on


def _compared(ctx, name, head, values, rows, cols, key, shown=None):
    """When asked: the step's difference from the unedited model's run (edited − unedited), as numbers where
    they fit and a heatmap with the changed cells outlined (shown: the vocabulary's columns drawn, if not all).
    Returns the unedited matrix, or None."""
    if not _comparing(ctx):
        return None
    before = head_matrix(runs.unedited_trace(ctx.state, ctx.vision)[name], head)
    before = before if shown is None else before[:, shown]
    change = difference(values, before)
    changed = np.argwhere(change != 0)
    if not len(changed):
        st.caption(ctx.t("view.unchanged"))
        return before
    st.caption(ctx.t("view.difference", changed=len(changed), total=change.size,
                     largest=fmt(np.nanmax(np.abs(change)) if np.isfinite(change).any() else np.nan,
                                 ctx.state.digits)))
    if change.shape[1] <= TABLE_COLS:
        numbers(ctx, change, rows, cols, label=r"\Delta " + _tex_name(ctx.t, ctx.trace.step(name), head))
    outlined = [(int(i), int(j)) for i, j in changed] if len(changed) <= OUTLINED_CELLS else ()
    plot(ctx, heatmap(change, rows, cols, marked=outlined, digits=ctx.state.digits, scale=type_scale(ctx)),
         f"difference.{key}", width=chart_width(len(cols)))
    return before
