"""Streamlit building blocks every page uses: a step (formula, shape, numbers, heatmap, drill-down),
per-head tabs, and weight editors. They only display the trace; the engine did the arithmetic."""
from __future__ import annotations

import contextvars
import functools
import math
import re
import weakref
from typing import NamedTuple

import numpy as np
import pandas as pd
import streamlit as st

from engine.explain import LINE_WIDTH

from . import classroom, context, departures, presenter
from .figures import CELL_WIDTH, PROJECTOR, TEXT_COLS, at_scale, heatmap, writes_numbers
from .format import arrow, bmatrix, bmatrix_around, difference, fmt, printed_width, table
from .i18n import literal
from .labels import (SEED_NOTES, description_key, indices, intro_keys, param_axes, param_key, param_tex, step_axes,
                     param_words_key, step_name_key, step_tex, unique)
from .navigation import neighbours
from .state import check_weight, encode, encode_view, slider_range

LATEX_CELLS = 8  # matrices up to 8 rows are also written out as a bmatrix ...
LATEX_COLS = 6  # ... up to 6 columns: 8 six-digit numbers with signs are wider than the page (a table holds them)
TABLE_COLS = 16  # wider matrices are shown as heatmaps only
POSITION_LIST = 32  # a weight's row or column is picked from a list up to this many positions, else by its number
CELL_LIST = 64  # a matrix's cell is picked from one list ("row, column") up to this many cells, else row and column
SLIDER_WIDTH = 160  # a grid row's sliders, side by side, in pixels (wrapped onto more lines when many)
OUTLINED_CELLS = 64  # a difference heatmap outlines its changed cells up to this many (beyond, the colours show them)
GLANCE_COLS = 6  # a flow writes its matrices out (at a glance) when none is wider than this
GLANCE_PAIR_WIDTH = 24  # ... two to a row when none is wider than this many characters of numbers (1280 px page)
ROOM = (r"\begin{gathered}\\[-1em]", r"\\[-1em]{}\end{gathered}")  # empty lines around a formula (latex())
GLANCE_GAP = r" \\ \\ "  # an empty line between a glance's lines: KaTeX, like LaTeX, makes \\[1em] a least depth,
# not added space, so the brackets of 3-row matrices touched the next line's


class _Drawn:
    """What a step page has drawn so far: the steps, and its intro, under which go its notes (the one on non-finite
    numbers is written once the page knows how far into the forward pass it went)."""

    def __init__(self):
        self.steps, self.compare = [], None  # steps: (trace, name); compare: view.compare's answer
        self.intro, self._notes = None, None  # the intro's element and its text; the notes' place, once made
        self.page = None  # the page's name, which its intro gives
        self.departures = set()  # the options whose departure from the paper the page has shown
        self.view = {}  # what the page shows, for its link (state.encode_view): only what is not the default
        self.shown = {}  # what the page shows, defaults too: presenter mode's place in the forward pass

    def note_nonfinite(self, ctx):
        bad = max((trace.nonfinite_through(name) for trace, name in self.steps), key=len, default=())
        if bad and self.intro is not None:
            self.notes().warning(ctx.t("msg.nonfinite", step=bad[0]))

    def notes(self):
        """The place for notes under the intro, made when the first note comes: the intro's element becomes a
        container holding the intro again (most reruns have no note, and send one element less)."""
        if self._notes is None:
            element, text = self.intro
            self._notes = element.container()
            self._notes.markdown(text)
        return self._notes


_DRAWN = contextvars.ContextVar("drawn", default=None)  # the step page being drawn by this thread, if any


def page(body):
    """A step page's body, as a fragment: its own widgets (editors, pickers, drill-down) rerun the page alone, not
    app.py and the sidebar (see context.get). The forward pass runs only as far as the steps the page draws
    (engine.Trace is lazy), and the page warns of inf or NaN only up to those steps. It ends with links to the
    steps before and after it."""
    @st.fragment
    @functools.wraps(body)
    def run():
        context.forget_stale_widgets()
        presenter.follow()  # a presenter's key moved to another page
        drawn = _Drawn()
        token = _DRAWN.set(drawn)
        try:
            body()
        finally:
            _DRAWN.reset(token)
        ctx = context.get()
        drawn.note_nonfinite(ctx)
        for part, value in st.session_state.pop("link_view", {}).items():  # parts of the link no widget here took
            _link_note(ctx, part, value)
        context.write_link(ctx.state, drawn.view)
        classroom.publish(ctx.t)  # this fragment's own reruns do not reach app.py's
        if ctx.state.present:
            presenter.rail(ctx, drawn.page, drawn.shown)
        else:
            neighbour_links(ctx.state, drawn.page)
    return run


def from_link(part: str, fits) -> object | None:
    """What the page's link asks a widget to show (state.decode_view), on the page's first run, if it `fits`;
    else None, and the page says which part of its link it ignored."""
    asked = st.session_state.get("link_view", {})
    if part not in asked:
        return None
    value = asked.pop(part)
    if fits(value):
        return value
    _link_note(context.get(), part, value)
    return None


def restore_from_link(key: str, part: str, options) -> None:
    """Give the widget `key` the option at the position the page's link names for `part`, if it has one there."""
    asked = from_link(part, lambda position: position < len(options))
    if asked is not None:
        st.session_state[key] = options[asked]


def _link_note(ctx, part, value):
    drawn = _DRAWN.get()
    notes = drawn.notes() if drawn is not None and drawn.intro is not None else st
    notes.warning(ctx.t("msg.url", detail=literal(f"{part}={encode_view({part: value})[part]!r}")))


def show_in_link(part: str, value, default) -> None:
    """Put what a widget shows into the page's link, unless it is what the page shows by default."""
    drawn = _DRAWN.get()
    if drawn is not None:
        drawn.shown[part] = value
    if drawn is not None and value != default:
        drawn.view[part] = value


def neighbour_links(state, page: str):
    """Links to the previous and the next step page (navigation.CHAIN), which switch pages in this session and
    keep the link's state (st.page_link clears the query without query_params), not this page's view."""
    ctx = context.get()
    around = neighbours(page, ctx.config.decoder_only)
    if around is None:
        return
    t = ctx.t
    query = encode(state)
    row = st.container(horizontal=True, horizontal_alignment="distribute")
    for which, neighbour, icon, side in zip(("previous", "next"), around, ("arrow_back", "arrow_forward"),
                                            ("left", "right")):
        row.page_link(context.page_entry(t, neighbour), label=t(f"nav.{which}", page=t(f"page.{neighbour}")),
                      icon=f":material/{icon}:", icon_position=side, query_params=query)


def intro(page: str, model_notes: bool = True):
    """The page's title and intro: the text true in every setting, then the sentences on the current settings
    (labels.intro_keys), and a note on the seeds' slips where the page teaches their step ("seednote.<page>").
    model_notes=False: the page says itself which words are new to the model it uses (generation)."""
    ctx = context.get()
    drawn = _DRAWN.get()
    if drawn is not None:
        drawn.page = page
    first, *settings = intro_keys(page, ctx.config)
    c = ctx.config  # the title, the intro, the sentences on the settings and the seeds' note: one element
    seed_note = [f":gray[:small[{ctx.t(f'seednote.{page}')}]]"] if page in SEED_NOTES else []
    text = "\n\n".join([f"# {ctx.t(f'page.{page}')}", ctx.t(first)]
                       + [ctx.t(key, d_k=c.d_k, divisor=f"{c.divisor:.4g}") for key in settings] + seed_note)
    element = st.markdown(text)
    if model_notes:
        new_words_note(ctx.model)
    _notes(ctx, element, text)


def new_words_note(model):
    """Which typed words the model's vocabulary lacked, and where their weights come from (engine.with_words)."""
    if model.new_words:
        st.info(context.get().t("msg.new_words", words=", ".join(model.new_words), seed=model.seed,
                                n=len(model.vocab) - len(model.new_words)))


def _notes(ctx, intro, text):
    drawn = _DRAWN.get()
    if drawn is not None:
        drawn.intro = (intro, text)
    elif ctx.trace.nonfinite:  # a page about the whole pass (overview, generation, training)
        st.warning(ctx.t("msg.nonfinite", step=ctx.trace.nonfinite[0]))
    error = st.session_state.pop("edit_error", None)
    if error:
        st.error(error)


def layer_picker(key: str, default: int = 0) -> int:
    ctx = context.get()
    n = ctx.config.depth(key.removeprefix("layer.")[:3])  # the key names the stack: "layer.enc", "layer.dec_stack"
    if n == 1:
        return 0
    restore_from_link(key, "layer", range(n))
    layer = _picker(key, ctx.t("ctl.layer"), [str(layer + 1) for layer in range(n)], default,
                    collapsed=False, help=ctx.t("ctl.layer_help"))  # layer 1 is enc.0: the picker gives the index
    show_in_link("layer", layer, default)
    return layer


def head_picker(key: str) -> int:
    """The head whose steps the page draws, from a row of buttons: one widget, where tabs sent a block per head
    (nine messages on every rerun with the paper's eight heads)."""
    ctx = context.get()
    n = ctx.config.n_heads
    restore_from_link(key, "head", range(n))
    head = _picker(key, ctx.t("view.head"), [f"{ctx.t('view.head')} {h + 1}" for h in range(n)])
    show_in_link("head", head, 0)
    return head


def section_tabs(sections: dict, key: str, link: str | None = None):
    """A page's sections, {label key: function that draws the section}, picked from a row of buttons; only the chosen
    one is drawn. One widget, where st.tabs sent a block per tab on every rerun. link: the part of the page's link
    that names the chosen section (by its position)."""
    ctx = context.get()
    keys = list(sections)
    labels = [ctx.t(label) for label in keys]
    if link:
        restore_from_link(key, link, labels)  # a section is chosen by its label
    if st.session_state.get(key) not in labels:  # the first run, another language's label, or a forged one
        st.session_state[key] = labels[0]
    chosen = st.segmented_control(ctx.t("view.section"), labels, key=key, required=True,
                                  label_visibility="collapsed")
    position = labels.index(chosen) if chosen in labels else 0
    if link:
        show_in_link(link, position, 0)
    sections[keys[position]]()


def _picker(key: str, label: str, choices: list[str], default: int = 0, collapsed: bool = True,
            help: str | None = None) -> int:
    """The position of the chosen button of a row (a segmented control)."""
    chosen = st.segmented_control(label, range(len(choices)), format_func=choices.__getitem__, default=default,
                                  required=True, key=key, help=help,
                                  label_visibility="collapsed" if collapsed else "visible")
    return default if chosen is None else chosen  # required is the browser's rule: a forged message can empty it


def flow(names: list[str], head: int | None = None, key: str = "flow", focus: str | None = None, trace=None,
         edits: tuple = ()):
    """Several steps of a page: their matrices side by side at a glance, then a button per step, of which only
    the chosen one is drawn (formula, heatmap, drill-down), so an edit redraws one chart, not all. trace: another
    pass than the page's (the dropout page's, in training mode). edits: parameters the steps read through earlier
    steps, whose editors the chosen step shows too (see step)."""
    ctx = context.get()
    trace = ctx.trace if trace is None else trace  # not `or`: len() of a trace runs the whole pass
    _record_drawn(trace, names)
    matrices = [_slice(trace[name], head) for name in names]
    widest = max(m.shape[1] for m in matrices)
    glance = widest <= GLANCE_COLS and all(m.shape[0] <= LATEX_CELLS for m in matrices) and not ctx.state.present
    # (a presenter's screen holds one step, not the flow's every matrix)
    if glance:  # one formula, not one per matrix: each element an edit redraws costs the browser time
        latex(drawing(trace, ("glance", tuple(names), head, ctx.state.digits, ctx.state.lang),
                       lambda: _glance(ctx, trace, names, matrices, head)))
    labels = [f"{i + 1}. {ctx.t(step_name_key(name))}" for i, name in enumerate(names)]
    leaves, default = [name.rsplit(".", 1)[-1] for name in names], names.index(focus) if focus else 0
    asked = from_link("step", leaves.__contains__)
    if asked is not None:
        st.session_state[f"{key}.{head}"] = leaves.index(asked)
    chosen = _picker(f"{key}.{head}", ctx.t("view.step"), labels, default=default)  # focus: the page's own step
    show_in_link("step", leaves[chosen], leaves[default])  # the step's name, the same in every language
    step(names[chosen], head, show_numbers=not glance, trace=trace, edits=edits)


def _glance(ctx, trace, names, matrices, head) -> str:
    cells = [f"{_tex_name(trace.step(name), head)} = " + bmatrix(matrix, ctx.state.digits)
             for name, matrix in zip(names, matrices)]
    lines = [r" \qquad ".join(cells[i] for i in line) for line in _glance_lines(matrices, ctx.state.digits)]
    return GLANCE_GAP.join(lines)  # lines as wide as they are


_DRAWINGS = {}  # id(trace) -> {what: its drawing}, for as long as the trace lives (see drawing)


def drawing(trace, what: tuple, draw):
    """What `draw()` makes of a trace (a formula, a chart, a cell's arithmetic), made once per trace: a trace is one
    state's run, shared by every session in that state (ui/context._run), so the sessions of a class following
    their teacher, or a reader going back to a step, draw it once. `what` names the drawing and all it depends on
    besides the trace. Forgotten with the trace."""
    drawings = _DRAWINGS.get(id(trace))
    if drawings is None:
        drawings = _DRAWINGS[id(trace)] = {}
        weakref.finalize(trace, _DRAWINGS.pop, id(trace), None)
    if what not in drawings:
        drawings[what] = draw()
    return drawings[what]


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


def latex(tex: str):
    """st.latex of lines (one gathered) between empty lines. Streamlit's formula box hides what overflows it, and
    KaTeX 0.16 puts a first line taller than text (a fraction, a matrix, a superscript) a few pixels above the box
    and a deep last one below it: the scaled step's drill-down lost the top of its numerator (5 px), a glance the
    top of its brackets, the dropout formula the foot of its fraction (3 px) (tests/test_readable.py,
    CUT_FORMULAS). The empty lines make room."""
    st.latex(ROOM[0] + tex + ROOM[1])


def text_and_formula(text: str, tex: str):
    """A sentence and its formula (with latex()'s room) in one element: every element is a message to send."""
    st.markdown(f"{text}\n\n$$\n{ROOM[0]}{tex}{ROOM[1]}\n$$")


def derivation(key: str, draw):
    """A derivation (ui.derivation_views) in an expander: `draw` runs only while it is open, so a closed one is one
    element and costs no sympy."""
    box = st.expander(context.get().t(f"derive.{key}"), key=f"derive.{key}", icon=":material/function:",
                      on_change="rerun")
    if box.open:
        with box:
            draw()


def _record_drawn(trace, names):
    drawn = _DRAWN.get()
    if drawn is not None:
        drawn.steps += [(trace, name) for name in names]


def _slice(value, head):
    value = value if head is None or value.ndim < 3 else value[head]
    return value if value.ndim == 2 else value[None, :]


def step(name: str, head: int | None = None, drill: bool = True, show_numbers: bool = True, trace=None,
         edits: tuple = ()):
    """One step of the trace (the page's, or `trace`): its name, formula and shape, editors for the parameters it
    reads (and for `edits`, which it reads through earlier steps), its numbers, heatmap and a cell's arithmetic."""
    ctx = context.get()
    trace = ctx.trace if trace is None else trace  # not `or`: len() of a trace runs the whole pass
    _record_drawn(trace, [name])
    s = trace.step(name)
    shape = f"{ctx.t('view.shape')}: ({', '.join(s.axes)}) = ({', '.join(map(str, s.shape))})"  # as declared
    text_and_formula(f"##### {ctx.t(step_name_key(name))} · {ctx.t(description_key(name))}\n\n"
                     f":gray[:small[`{name}` · {shape}]]", ctx.t.words(s.formula))  # the code's name for the API
    paper_form((s.kind, name.rsplit(".", 1)[-1]), name)
    editors_below = ctx.state.present  # a presenter's screen: the formula, then its heatmap (projector type is tall)
    if not editors_below:
        _editors(ctx, s, head, edits)
    axes = step_axes(trace, name)
    values = _slice(s.value, head)  # (rows, cols)
    rows, cols = (axes[-2], axes[-1]) if s.value.ndim > 1 else ([""], axes[-1])
    key = f"{name}.{head}"
    selected = _selection(key, len(rows), len(cols)) if drill else None  # no drill-down: no cell to mark or click
    scale = type_scale(ctx)
    chart = drawing(trace, ("heatmap", name, head, selected, ctx.state.digits, scale),
                    lambda: heatmap(values, rows, cols, selected, digits=ctx.state.digits, scale=scale))
    repeated = writes_numbers(chart) and (_as_table(values) or ctx.state.present)  # a table would repeat the cells'
    if show_numbers and not repeated:  # text; a presenter's screen holds the heatmap with its numbers, not both
        numbers(values, rows, cols, label=_tex_name(s, head))
    plot(chart, f"chart.{key}", on_select=_on_click(key, len(rows), len(cols)) if drill else "ignore",
         selection_mode="points", width=chart_width(len(cols)))
    if editors_below:
        _editors(ctx, s, head, edits)
    unedited = _compared(ctx, name, head, values, rows, cols, key) if ctx.state.edits and trace is ctx.trace else None
    if drill:
        _drill(ctx, trace, name, head, key, rows, cols, unedited)


def _editors(ctx, s, head, edits):
    """The editors of a step's parameters, under its formula on every page: a weight is edited where the formula it
    enters is written, and what it changes is drawn below. `edits` (read through earlier steps) are edited one
    cell at a time, the lighter widget."""
    used_rows = sorted(set(s.meta["ids"])) if s.kind == "embed" else None
    for ref in [ref for ref in s.inputs if ref in ctx.model.params] + list(edits):
        per_head = ctx.model.params[ref].ndim == 3 or param_key(ref) in ("b_Q", "b_K", "b_V")
        edit_param(ref, head=head if per_head else None, rows=None if ref in edits else used_rows,
                   one_cell=ref in edits)


def paper_form(steps: tuple, key: str):
    """Next to a formula: where the current settings make its steps (kinds or last names, ui.departures) depart from
    the paper, what the paper does, and a button per option that sets the paper's value. Each option once per
    page, the options of one place in one box."""
    ctx, drawn = context.get(), _DRAWN.get()
    shown = [d for d in departures.for_steps(steps, ctx.config) if drawn is None or d.field not in drawn.departures]
    if drawn is not None:
        drawn.departures.update(d.field for d in shown)
    if shown:
        _departure_note(ctx, shown, key)


def _departure_note(ctx, shown, key):
    """One box: each departure's sentence (and, for one the paper has no value for here, why no button), then the
    buttons; its elements are sent on every rerun, so the sentences share one."""
    note, values = st.container(border=True), departures.values(ctx.config)
    settings = [departures.paper_settings(departure, ctx.config) for departure in shown]
    texts = [ctx.t(departures.text_key(departure, ctx.config), **values) + (
        "" if paper is not None else "\n\n" + ctx.t("depart.no_paper_value")) for departure, paper in zip(shown, settings)]
    note.markdown(f":orange-badge[{ctx.t('depart.badge')}] " + "\n\n".join(texts))
    for departure, paper in zip(shown, settings):
        if paper is not None:
            note.button(ctx.t(f"depart.{departure.field}.button", **values), key=f"paper.{departure.field}.{key}",
                        on_click=context.use_settings, args=(paper,))
    if ctx.state.weights and any(paper is not None for paper in settings):
        note.caption(ctx.t("depart.drops_weights"))


def numbers(matrix, rows, cols, label=None, digits=None):
    """A matrix as a bmatrix when small, as a table when wider; the widest are left to the heatmap. digits: the
    reader's setting unless given."""
    ctx = context.get()
    digits = digits or ctx.state.digits
    matrix = matrix if matrix.ndim == 2 else matrix[None, :]
    if not _as_table(matrix):
        latex((f"{label} = " if label else "") + bmatrix(matrix, digits))
    elif matrix.shape[1] <= TABLE_COLS:
        cells = dict(zip(unique(cols), zip(*table(matrix, digits))))
        st.dataframe(arrow({"": unique(rows), **cells}), hide_index=True,
                     column_config={"": st.column_config.TextColumn(pinned=True)})  # the row labels
    else:
        st.caption(ctx.t("view.big", rows=matrix.shape[0], cols=matrix.shape[1]))


def _as_table(matrix) -> bool:
    """Whether numbers() writes a matrix as a table (or leaves it to the heatmap): too big for a bmatrix."""
    return not (matrix.shape[0] <= LATEX_CELLS and matrix.shape[1] <= LATEX_COLS)


def type_scale(ctx) -> float:
    """How much larger than normal a chart's type is: a presenter's projector type (figures.PROJECTOR), or 1."""
    return PROJECTOR if ctx.state.present else 1.0


def plot(chart, key: str | None = None, where=st, **options):
    """A chart in `where` (the page, a column, a placeholder), its type presenter mode's size when presenting, without
    plotly's mode bar."""
    return where.plotly_chart(at_scale(chart, type_scale(context.get())), key=key, config={"displayModeBar": False},
                              **options)


def chart_width(n_cols):
    """A heatmap with numbers in its cells asks for CELL_WIDTH per column (and the labels' and colour bar's 200 px),
    which Streamlit caps at the main column's width; wider matrices take the whole width."""
    return "stretch" if n_cols > TEXT_COLS else 200 + CELL_WIDTH * n_cols


def _head_of(value, head):
    """The head a step's matrix belongs to: none for a step all heads share (the causal mask)."""
    return head if value.ndim == 3 else None


def _tex_name(step, head):
    """A step's symbol with its head's number (S_1'), or its name in the reader's language."""
    return step_tex(step.symbol, _head_of(step.value, head), context.get().t(step_name_key(step.name)))


def _selection(key, n_rows, n_cols):
    """The drill-down's cell, within the matrix (see _clamped), or the one the page's link asks for."""
    asked = from_link("cell", lambda cell: cell[0] < n_rows and cell[1] < n_cols)
    if asked is not None:
        st.session_state[f"row.{key}"], st.session_state[f"col.{key}"] = asked
    row, col = (_clamped(st.session_state.get(f"{axis}.{key}"), n) for axis, n in (("row", n_rows), ("col", n_cols)))
    st.session_state[f"row.{key}"], st.session_state[f"col.{key}"] = row, col
    show_in_link("cell", (row, col), (0, 0))
    return row, col


def _on_click(key, n_rows, n_cols):
    """A click on the heatmap picks the drill-down's cell; a forged selection (not a point of the matrix) is
    ignored."""
    def callback():
        points = st.session_state[f"chart.{key}"].selection.points
        point = points[0] if points and isinstance(points[0], dict) else {}
        row, col = _position(point.get("y"), n_rows), _position(point.get("x"), n_cols)
        if row is not None and col is not None:
            st.session_state[f"row.{key}"], st.session_state[f"col.{key}"] = row, col
    return callback


def _clamped(value, n):
    """A picker's position within range(n): a typed fraction is dropped (2.6 picks 2); anything but a finite
    number from 0 (a forged message) means 0."""
    number = value if isinstance(value, (int, float)) and not isinstance(value, bool) else -1
    return min(int(number), n - 1) if math.isfinite(number) and number >= 0 else 0


def _position(value, n):
    """A chart coordinate or a grid's row as a position in range(n), or None if it is not one (NaN, -1, 2.5, "a")."""
    whole = isinstance(value, int) and not isinstance(value, bool) or isinstance(value, float) and value.is_integer()
    return int(value) if whole and 0 <= value < n else None


def _row_of_widgets():
    """Widgets side by side, sharing the width: one block where st.columns sends a block per column (each block
    is one more message to the browser on every rerun)."""
    return st.container(horizontal=True, gap="medium")


def _comparing(ctx) -> bool:
    """Whether the reader asks to compare with the unedited model: one toggle per page, above its first step, whose
    answer the session keeps from page to page."""
    drawn = _DRAWN.get()
    if drawn is not None and drawn.compare is not None:
        return drawn.compare
    on = st.toggle(ctx.t("view.compare"), value=st.session_state.get("compare", False), key="view.compare")
    st.session_state["compare"] = on
    if drawn is not None:
        drawn.compare = on
    return on


def _compared(ctx, name, head, values, rows, cols, key):
    """When asked: the step's difference from the unedited model's run (edited − unedited), as numbers where
    they fit and a heatmap with the changed cells outlined. Returns the unedited matrix, or None."""
    if not _comparing(ctx):
        return None
    before = _slice(context.unedited_trace(ctx.state)[name], head)
    change = difference(values, before)
    changed = np.argwhere(change != 0)
    if not len(changed):
        st.caption(ctx.t("view.unchanged"))
        return before
    st.caption(ctx.t("view.difference", changed=len(changed), total=change.size,
                     largest=fmt(np.nanmax(np.abs(change)) if np.isfinite(change).any() else np.nan,
                                 ctx.state.digits)))
    if change.shape[1] <= TABLE_COLS:
        numbers(change, rows, cols, label=r"\Delta " + _tex_name(ctx.trace.step(name), head))
    outlined = [(int(i), int(j)) for i, j in changed] if len(changed) <= OUTLINED_CELLS else ()
    plot(heatmap(change, rows, cols, marked=outlined, digits=ctx.state.digits, scale=type_scale(ctx)),
         f"difference.{key}", width=chart_width(len(cols)))
    return before


def _drill(ctx, trace, name, head, key, rows, cols, unedited=None):
    with st.container(border=True):
        row, col = _drill_cell(ctx, key, rows, cols)
        ndim = trace[name].ndim
        index = _full_index(head if ndim == 3 else None, row, col, ndim)
        width = round(LINE_WIDTH / PROJECTOR) if ctx.state.present else LINE_WIDTH  # a presenter's: shorter lines
        explanation = drawing(trace, ("explain", name, index, ctx.state.digits, width),  # the plain text's digits too
                              lambda: trace.explain(name, index, ctx.state.digits, ctx.state.digits, width))
        latex(ctx.t.words(explanation.latex))
        if unedited is not None:
            now, was = _slice(ctx.trace[name], head)[row, col], unedited[row, col]
            st.caption(ctx.t("view.unedited_value", value=fmt(was, ctx.state.digits),
                             change=fmt(difference(now, was), ctx.state.digits)))
        plain = st.expander(ctx.t("view.plain"), key=f"plain.{key}", on_change="rerun")
        if plain.open:  # the text is drawn only when asked for: an edit redraws one element less
            with plain:
                st.code(ctx.t.words(explanation.text), language=None, wrap_lines=True)


def _drill_cell(ctx, key, rows, cols):
    """The drill-down's cell (the state's row.KEY and col.KEY, which a click on the heatmap and the link set too):
    from one list of cells, its label the drill-down's title, where the matrix is small; else a row and a column
    picker under the title."""
    title = f"{ctx.t('view.drill')} {ctx.t('view.drill_hint')}"  # plain: a label's Markdown is its aria-label too
    if len(rows) * len(cols) > CELL_LIST:
        st.markdown(f"**{ctx.t('view.drill')}** {ctx.t('view.drill_hint')}")
        pickers = _row_of_widgets()
        return (_position_picker(pickers, ctx.t("view.row"), rows, f"row.{key}"),
                _position_picker(pickers, ctx.t("view.col"), cols, f"col.{key}"))
    row, col = st.session_state[f"row.{key}"], st.session_state[f"col.{key}"]  # (_selection)
    st.session_state[f"cell.{key}"] = row * len(cols) + col
    _cell_list(st, title, rows, cols, f"cell.{key}", on_change=_on_cell_pick, args=(key, len(rows), len(cols)))
    return row, col


def _on_cell_pick(key, n_rows, n_cols):
    """A cell picked from the drill-down's list, into the state's row.KEY and col.KEY; a forged position (not one of
    the list's) leaves the cell as it was."""
    position = _position(st.session_state[f"cell.{key}"], n_rows * n_cols)
    if position is not None:
        st.session_state[f"row.{key}"], st.session_state[f"col.{key}"] = divmod(position, n_cols)


def _cell_list(container, label, rows, cols, key, **callback):
    """(row, col) of a cell picked from one list of a matrix's cells, each named by its row and column label. A forged
    position (out of range, a fraction, NaN) is clamped like a picker's (see _clamped)."""
    t, n = context.get().t, len(rows) * len(cols)
    chosen = container.selectbox(label, range(n), key=key, **callback,
                                 format_func=lambda i: t("view.cell", row=rows[i // len(cols)], col=cols[i % len(cols)]))
    return divmod(_clamped(chosen, n), len(cols))


# ---- editing weights -----------------------------------------------------------------------------------

def edit_param(name: str, head: int | None = None, rows: list[int] | None = None, one_cell: bool = False):
    """An editor for a parameter (one head's slice, optionally only some rows) in an expander, with a reset
    button: a grid with a slider per cell of a chosen row, or one cell at a time (the cell, the matrix with that
    cell marked, a number and a slider) for wide matrices and where one_cell asks for the lighter widget
    (an edit then redraws a number input, not a grid)."""
    ctx = context.get()
    value = ctx.model.params[name]
    axes = param_axes(ctx.model.vocab.tokens, name, value.shape)
    matrix = value[head] if head is not None else value  # per-head weights and biases: one head's slice
    matrix = matrix if matrix.ndim == 2 else matrix[None, :]
    row_ids = rows if rows is not None else list(range(matrix.shape[0]))
    row_labels = [axes[-2][i] for i in row_ids] if matrix.shape[0] > 1 or value.ndim - (head is not None) > 1 \
        else [name]
    title = f"${param_tex(name, head)}$ · {ctx.t(param_words_key(name, ctx.config))}"  # the head: the symbol's index
    box = st.expander(f"{ctx.t('view.edit', name=title)} · `{name}`", key=f"open.{name}.{head}", on_change="rerun")
    if not box.open:  # the editor is drawn (and costs a rerun's time) only while its expander is open
        return
    with box:
        version = st.session_state.get("edit_version", 0)
        key = f"edit.{name}.{head}.{version}"
        columns = unique(axes[-1])
        grid = matrix.shape[1] <= TABLE_COLS and not one_cell
        editor = _Editor(name, head, row_ids, value.ndim, key)
        if grid:
            st.caption(ctx.t("view.edit_hint") + " " + ctx.t("view.slide_hint"))
            frame = _editor_frame(key, lambda: pd.DataFrame(matrix[row_ids], index=unique(row_labels), columns=columns))
            st.data_editor(frame, key=key, disabled=["_index"],  # the row labels are tokens or positions, not weights
                           on_change=_on_edit, args=(key, name, head, row_ids, columns, value.ndim))
            _row_sliders(ctx, editor, row_labels, axes[-1])
        else:
            _single_cell_editor(ctx, editor, matrix[row_ids], row_labels, axes[-1])
        if any(p == name for p, _, _ in ctx.state.edits):
            st.button(ctx.t("view.reset", name=f"${param_tex(name)}$"), key=f"reset.{key}",
                      on_click=lambda: context.set_state(st.session_state.state.without_edits(name)))


class _Editor(NamedTuple):
    """Which cells an editor changes: a parameter, its head (or None), the parameter's rows it shows, the
    parameter's number of axes, and the editor's widget key."""
    name: str
    head: int | None
    row_ids: list
    ndim: int
    key: str

    def index(self, row, col):
        """The parameter's index of the cell (row, col) of the editor."""
        return _full_index(self.head, self.row_ids[row], col, self.ndim)


def _editor_frame(key, make):
    """The numbers an editor was opened with. Passing the same frame on every rerun keeps the grid's own
    record of what was typed; new numbers would make the grid reset itself and ask for a second rerun."""
    frames = st.session_state.setdefault("editor_frames", {})
    if key not in st.session_state or key not in frames:  # a new editor, or one that left the page
        frames[key] = make()
    return frames[key]


def _full_index(head, row, col, ndim):
    """The parameter's index of a cell of the editor (which shows one head's slice of per-head weights)."""
    slice_ndim = ndim - (head is not None)
    return ((head,) if head is not None else ()) + ((row, col) if slice_ndim > 1 else (col,))


def _on_edit(key, name, head, row_ids, columns, ndim):
    state, refused = st.session_state.state, False
    for row, cells in st.session_state[key]["edited_rows"].items():
        for column, typed in cells.items():
            position = _position(row, len(row_ids))
            if position is None or column not in columns:  # a forged cell, or a row label ("_index"): ignored,
                refused = True  # and the grid redrawn, as Streamlit would fail to write that cell into its own copy
                continue
            index = _full_index(head, row_ids[position], columns.index(column), ndim)
            try:
                state = state.with_edit(name, index, check_weight(typed))
            except ValueError:
                _report_bad_edit(name, index, typed)
                refused = True
    context.set_state(state, reset_editors=refused)


def _report_bad_edit(name, index, typed):
    """What was typed, quoted as code: Markdown would make a link of "[x](//elsewhere)", math of $…$."""
    st.session_state["edit_error"] = context.get().t(
        "msg.edit_bad", param=name, index=",".join(map(str, index)), value=literal(repr(typed)))


def _take_edit(name, index, typed):
    """One typed or slid weight into the state, or a message and the editors redrawn from the model."""
    try:
        context.set_state(st.session_state.state.with_edit(name, index, check_weight(typed)), reset_editors=False)
    except ValueError:
        _report_bad_edit(name, index, typed)
        context.set_state(st.session_state.state)


def _single_cell_editor(ctx, editor, matrix, row_labels, col_labels):
    """The cell (from one list, the hint its label, or row and column pickers under the hint), the matrix around
    it (boxed), and its number typed or slid."""
    hint = ctx.t("view.edit_hint_cell") + " " + ctx.t("view.slide_hint")
    if len(row_labels) * len(col_labels) <= CELL_LIST:
        r, c = _cell_list(st, hint, row_labels, col_labels, f"{editor.key}.cell")
    else:
        st.caption(hint)
        cell = _row_of_widgets()
        r = _position_picker(cell, ctx.t("view.row"), row_labels, f"{editor.key}.r")
        c = _position_picker(cell, ctx.t("view.col"), col_labels, f"{editor.key}.c")
    window, rows, cols = bmatrix_around(matrix, r, c, digits=ctx.state.digits)
    latex(f"{param_tex(editor.name, editor.head)} = {window}")
    if len(rows) < matrix.shape[0] or len(cols) < matrix.shape[1]:
        st.caption(ctx.t("view.edit_window", rows=f"{row_labels[rows[0]]}–{row_labels[rows[-1]]}",
                         cols=f"{col_labels[cols[0]]}–{col_labels[cols[-1]]}", n_rows=matrix.shape[0],
                         n_cols=matrix.shape[1]))
    index = editor.index(r, c)
    typed_key = f"{editor.key}.v.{index}"
    number = _row_of_widgets()
    number.number_input(f"${param_tex(editor.name, editor.head)}$", value=float(ctx.model.params[editor.name][index]),
                        key=typed_key, format="%.6g", on_change=_on_cell_edit, args=(typed_key, editor.name, index))
    _weight_slider(number, ctx.t("view.slider"), editor, index, typed_key)


def _row_sliders(ctx, editor, row_labels, col_labels):
    """Below a grid: a slider per cell of a row, once one is picked (none at first: an edit of a grid with a row of
    sliders costs the server about 1.5 times as much, bench/pages_bench.py on the FFN page)."""
    labels, key = unique(row_labels), f"{editor.key}.row"
    if len(labels) <= POSITION_LIST:  # one click on a row of buttons (a list's combobox opens on a second one)
        r = st.segmented_control(ctx.t("view.slider_pick"), range(len(labels)), format_func=labels.__getitem__,
                                 key=key)
    else:
        r = st.selectbox(ctx.t("view.slider_row"), range(len(labels)), index=None, format_func=labels.__getitem__,
                         placeholder=ctx.t("view.slider_pick"), key=key)
    if r is None:
        return
    sliders = _row_of_widgets()
    for c, label in enumerate(col_labels):
        _weight_slider(sliders, f"{ctx.t('view.col')} {_plain(label)}", editor, editor.index(r, c), editor.key,
                       width=SLIDER_WIDTH)


def _weight_slider(container, label, editor, index, typed_key, width="stretch"):
    """A slider for one weight, around its value (state.slider_range). A new value is a new range, so a new
    slider that starts at it. A forged NaN, ±inf or number outside the range is replaced by Streamlit with the
    value the slider was drawn with, before any callback: nothing changes."""
    low, high, step, start, decimals = slider_range(context.get().model.params[editor.name][index])
    key = f"{editor.key}.slider.{index}"  # ends in ")": not a typed editor's key (bench/pages_bench.py)
    container.slider(label, min_value=low, max_value=high, value=start, step=step, format=f"%.{decimals}f",
                     key=key, width=width, on_change=_on_slide,
                     args=(key, typed_key, typed_key == editor.key, editor.name, index, decimals))


def _on_slide(key, typed_key, grid, name, index, decimals):
    """A released slider: its number, rounded to the slider's steps, is taken as if typed, and the typed editor
    shows it: the number input is given it (the browser keeps an input's own number otherwise), the grid is
    drawn anew from the edited model. (Written on purpose: .streamlit/config.toml silences Streamlit's warning
    about a widget given both a value and a number through session state.)"""
    slid = round(st.session_state[key], decimals)
    _take_edit(name, index, slid)
    if grid:
        st.session_state.pop(typed_key, None)
        st.session_state.get("editor_frames", {}).pop(typed_key, None)
    else:
        st.session_state[typed_key] = slid


def _plain(label: str) -> str:
    """A token as a widget label, which Streamlit reads as Markdown: every ASCII punctuation mark escaped."""
    return re.sub(r"([!-/:-@\[-`{-~])", r"\\\1", label)


def _position_picker(container, label: str, labels: list[str], key: str) -> int:
    """A row or column of a weight matrix or of a step (the drill-down): from a list, or by its number where the
    labels are only the positions 0..n-1 and there are many of them (a list of 512 costs every rerun a few ms)."""
    n = len(labels)
    if n <= POSITION_LIST or labels != indices(n):
        return container.selectbox(label, range(n), format_func=labels.__getitem__, key=key)
    typed = container.number_input(f"{label} (0–{n - 1})", min_value=0.0, max_value=float(n - 1), step=1.0,
                                   format="%g", key=key)  # a float input (context.whole_number_input), from 0
    return _clamped(typed, n)


def _on_cell_edit(widget_key, name, index):
    _take_edit(name, index, st.session_state[widget_key])
