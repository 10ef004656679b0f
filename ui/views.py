"""Streamlit building blocks every page uses: a step (formula, shape, numbers, heatmap, drill-down),
per-head tabs, and weight editors. They only display the trace; the engine did the arithmetic."""
from __future__ import annotations

import contextvars
import functools
import math

import pandas as pd
import streamlit as st

from . import context
from .figures import heatmap
from .format import arrow, bmatrix, printed_width, table
from .labels import SEED_NOTES, description_key, indices, intro_keys, param_axes, step_axes, unique
from .state import check_weight

LATEX_CELLS = 8  # matrices up to 8 rows are also written out as a bmatrix ...
LATEX_COLS = 6  # ... up to 6 columns: 8 six-digit numbers with signs are wider than the page (a table holds them)
TABLE_COLS = 16  # wider matrices are shown as heatmaps only
POSITION_LIST = 32  # a weight's row or column is picked from a list up to this many positions, else by its number
GLANCE_COLS = 6  # a flow writes its matrices out (at a glance) when none is wider than this
GLANCE_PAIR_WIDTH = 24  # ... two to a row when none is wider than this many characters of numbers (1280 px page)
AXIS_SYMBOLS = {
    "q": ("h", "n", "d_k"), "k": ("h", "n", "d_k"), "v": ("h", "n", "d_v"), "heads": ("h", "n", "d_v"),
    "scores": ("h", "n_q", "n_k"), "scaled": ("h", "n_q", "n_k"), "masked": ("h", "n_q", "n_k"),
    "weights": ("h", "n_q", "n_k"), "mask": ("n_q", "n_k"), "concat": ("n", "h·d_v"), "hidden": ("n", "d_ff"),
    "act": ("n", "d_ff"), "logits": ("n", "vocab"), "vocab_mask": ("vocab",), "masked_logits": ("n", "vocab"),
    "probs": ("n", "vocab"), "dropout": ("h", "n_q", "n_k"),
    "src.dropout": ("n", "d_model"), "tgt.dropout": ("n", "d_model"),  # the attention weights' dropout is per head
    "cross_attn.q": ("h", "n_q", "d_k"), "cross_attn.k": ("h", "n_k", "d_k"), "cross_attn.v": ("h", "n_k", "d_v"),
    "cross_attn.heads": ("h", "n_q", "d_v"), "cross_attn.concat": ("n_q", "h·d_v"),  # decoder rows, encoder keys
    "cross_attn.out": ("n_q", "d_model"),
}


class _Drawn:
    """What a step page has drawn so far: the steps, and the place under its intro for the note on non-finite
    numbers, which is written once the page knows how far into the forward pass it went."""

    def __init__(self):
        self.steps, self.notes = [], None  # steps: (trace, name) pairs

    def note_nonfinite(self, ctx):
        bad = max((trace.nonfinite_through(name) for trace, name in self.steps), key=len, default=())
        if bad and self.notes is not None:
            self.notes.warning(ctx.t("msg.nonfinite", step=bad[0]))


_DRAWN = contextvars.ContextVar("drawn", default=None)  # the step page being drawn by this thread, if any


def page(body):
    """A step page's body, as a fragment: its own widgets (editors, pickers, drill-down) rerun the page alone, not
    app.py and the sidebar (see context.get). The forward pass runs only as far as the steps the page draws
    (engine.Trace is lazy), and the page warns of inf or NaN only up to those steps."""
    @st.fragment
    @functools.wraps(body)
    def run():
        context.forget_stale_widgets()
        drawn = _Drawn()
        token = _DRAWN.set(drawn)
        try:
            body()
        finally:
            _DRAWN.reset(token)
        drawn.note_nonfinite(context.get())
    return run


def intro(page: str):
    """The page's title and intro: the text true in every setting, then the sentences on the current settings
    (labels.intro_keys), and a note on the seeds' slips where the page teaches their step ("seednote.<page>")."""
    ctx = context.get()
    st.title(ctx.t(f"page.{page}"))
    first, *settings = intro_keys(page, ctx.config)
    st.markdown(ctx.t(first))
    if settings:
        c = ctx.config
        st.markdown("\n\n".join(ctx.t(key, d_k=c.d_k, divisor=f"{c.divisor:.4g}") for key in settings))
    if page in SEED_NOTES:
        st.caption(ctx.t(f"seednote.{page}"))
    _notes(ctx)


def _notes(ctx):
    if ctx.model.new_words:
        st.info(ctx.t("msg.new_words", words=", ".join(ctx.model.new_words), seed=ctx.model.seed,
                      n=len(ctx.model.vocab) - len(ctx.model.new_words)))
    drawn = _DRAWN.get()
    if drawn is not None:
        drawn.notes = st.container()
    elif ctx.trace.nonfinite:  # a page about the whole pass (overview, generation, training)
        st.warning(ctx.t("msg.nonfinite", step=ctx.trace.nonfinite[0]))
    error = st.session_state.pop("edit_error", None)
    if error:
        st.error(error)


def layer_picker(key: str) -> int:
    ctx = context.get()
    if ctx.config.n_layers == 1:
        return 0
    return _picker(key, ctx.t("ctl.layer"), [str(layer + 1) for layer in range(ctx.config.n_layers)],
                   collapsed=False, help=ctx.t("ctl.layer_help"))  # layer 1 is enc.0: the picker gives the index


def head_tabs(key: str):
    """Per-head tabs: yields the head index of the open tab only, inside that tab."""
    ctx = context.get()
    yield from lazy_tabs([f"{ctx.t('view.head')} {h + 1}" for h in range(ctx.config.n_heads)], key)


def lazy_tabs(labels: list[str], key: str):
    """Tabs of which only the open one is drawn: yields its position, inside it (a rerun draws one tab's worth)."""
    for position, tab in enumerate(st.tabs(labels, key=key, on_change="rerun")):
        if tab.open:
            with tab:
                yield position


def section_tabs(sections: dict, key: str):
    """A page's sections as lazy tabs: {label key: function that draws the section}; only the open one is drawn."""
    ctx = context.get()
    labels = list(sections)
    for position in lazy_tabs([ctx.t(label) for label in labels], key):
        sections[labels[position]]()


def _picker(key: str, label: str, choices: list[str], default: int = 0, collapsed: bool = True,
            help: str | None = None) -> int:
    """The position of the chosen button of a row (a segmented control)."""
    chosen = st.segmented_control(label, range(len(choices)), format_func=choices.__getitem__, default=default,
                                  required=True, key=key, help=help,
                                  label_visibility="collapsed" if collapsed else "visible")
    return default if chosen is None else chosen  # required is the browser's rule: a forged message can empty it


def flow(names: list[str], head: int | None = None, key: str = "flow", focus: str | None = None, trace=None):
    """Several steps of a page: their matrices side by side at a glance, then a button per step, of which only
    the chosen one is drawn (formula, heatmap, drill-down), so an edit redraws one chart, not all. trace: another
    pass than the page's (the dropout page's, in training mode)."""
    ctx = context.get()
    trace = ctx.trace if trace is None else trace  # not `or`: len() of a trace runs the whole pass
    _record_drawn(trace, names)
    matrices = [_slice(trace[name], head) for name in names]
    widest = max(m.shape[1] for m in matrices)
    glance = widest <= GLANCE_COLS and all(m.shape[0] <= LATEX_CELLS for m in matrices)
    if glance:  # one formula, not one per matrix: each element an edit redraws costs the browser time
        per_row = 2 if max(map(printed_width, matrices)) <= GLANCE_PAIR_WIDTH else 1
        cells = [f"{_tex_name(name, _head_of(trace[name], head))} = " + bmatrix(matrix)
                 for name, matrix in zip(names, matrices)]
        lines = [r" & \qquad ".join(cells[first:first + per_row]) for first in range(0, len(cells), per_row)]
        st.latex(r"\begin{array}{" + "l" * per_row + "}" + r" \\[1em] ".join(lines) + r"\end{array}")
    labels = [f"{i + 1}. {name.rsplit('.', 1)[-1]}" for i, name in enumerate(names)]
    chosen = _picker(f"{key}.{head}", ctx.t("view.step"), labels,
                     default=names.index(focus) if focus else 0)  # focus: the step the page is about
    step(names[chosen], head, show_numbers=not glance, trace=trace)


def _record_drawn(trace, names):
    drawn = _DRAWN.get()
    if drawn is not None:
        drawn.steps += [(trace, name) for name in names]


def _slice(value, head):
    value = value if head is None or value.ndim < 3 else value[head]
    return value if value.ndim == 2 else value[None, :]


def step(name: str, head: int | None = None, drill: bool = True, show_numbers: bool = True, trace=None):
    """One step of the trace (the page's, or `trace`): its formula, shape, numbers, heatmap, a cell's arithmetic,
    and editors for the parameters it reads."""
    ctx = context.get()
    trace = ctx.trace if trace is None else trace  # not `or`: len() of a trace runs the whole pass
    _record_drawn(trace, [name])
    s = trace.step(name)
    shape = f"{ctx.t('view.shape')}: ({', '.join(_symbols(name, s.value.ndim))}) = ({', '.join(map(str, s.shape))})"
    st.markdown(f"##### `{name}` · {ctx.t(description_key(name))}\n\n:gray[:small[{shape}]]")  # one element, not two
    st.latex(ctx.t.math(s.formula))
    axes = step_axes(trace, name)
    values = _slice(s.value, head)  # (rows, cols)
    rows, cols = (axes[-2], axes[-1]) if s.value.ndim > 1 else ([""], axes[-1])
    key = f"{name}.{head}"
    selected = _selection(key, len(rows), len(cols)) if drill else None  # no drill-down: no cell to mark or click
    if show_numbers:
        numbers(values, rows, cols, label=_tex_name(name, _head_of(s.value, head)))
    st.plotly_chart(heatmap(values, rows, cols, selected), key=f"chart.{key}",
                    on_select=_on_click(key, len(rows), len(cols)) if drill else "ignore", selection_mode="points",
                    config={"displayModeBar": False}, width=_chart_width(len(cols)))
    if drill:
        _drill(ctx, trace, name, head, key, rows, cols)
    for ref in s.inputs:
        if ref in ctx.model.params:
            per_head = ctx.model.params[ref].ndim == 3 or ref.rsplit(".", 1)[-1] in ("b_Q", "b_K", "b_V")
            used_rows = sorted(set(s.meta["ids"])) if s.kind == "embed" else None
            edit_param(ref, head=head if per_head else None, rows=used_rows)


def numbers(matrix, rows, cols, label=None, digits=6):
    """A matrix as a bmatrix when small, as a table when wider; the widest are left to the heatmap."""
    ctx = context.get()
    matrix = matrix if matrix.ndim == 2 else matrix[None, :]
    if matrix.shape[0] <= LATEX_CELLS and matrix.shape[1] <= LATEX_COLS:
        st.latex((f"{label} = " if label else "") + bmatrix(matrix, digits))
    elif matrix.shape[1] <= TABLE_COLS:
        cells = dict(zip(unique(cols), zip(*table(matrix, digits))))
        st.dataframe(arrow({"": unique(rows), **cells}), hide_index=True,
                     column_config={"": st.column_config.TextColumn(pinned=True)})  # the row labels
    else:
        st.caption(ctx.t("view.big", rows=matrix.shape[0], cols=matrix.shape[1]))


def _chart_width(n_cols):
    """Narrow matrices get a compact heatmap; wide ones the whole width."""
    return "stretch" if n_cols > 8 else 200 + 90 * n_cols


def _symbols(name, ndim):
    """The axes' symbols: by the whole name, its block and step ("cross_attn.q"), or its step alone."""
    parts = name.split(".")
    key = next((k for k in (name, ".".join(parts[-2:]), parts[-1]) if k in AXIS_SYMBOLS), None)
    return AXIS_SYMBOLS.get(key, ("n", "d_model") if ndim > 1 else ("d_model",))[-ndim:]


def _head_of(value, head):
    """The head a step's matrix belongs to: none for a step all heads share (the causal mask)."""
    return head if value.ndim == 3 else None


def _tex_name(name, head):
    leaf = name.rsplit(".", 1)[-1].replace("_", r"\_")
    return rf"\text{{{leaf}}}" + (f"_{{{head + 1}}}" if head is not None else "")


def _selection(key, n_rows, n_cols):
    """The drill-down's cell, within the matrix (see _clamped)."""
    row, col = (_clamped(st.session_state.get(f"{axis}.{key}"), n) for axis, n in (("row", n_rows), ("col", n_cols)))
    st.session_state[f"row.{key}"], st.session_state[f"col.{key}"] = row, col
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


def _drill(ctx, trace, name, head, key, rows, cols):
    with st.container(border=True):
        st.markdown(f"**{ctx.t('view.drill')}** {ctx.t('view.drill_hint')}")
        pickers = _row_of_widgets()
        row = _position_picker(pickers, ctx.t("view.row"), rows, f"row.{key}")
        col = _position_picker(pickers, ctx.t("view.col"), cols, f"col.{key}")
        ndim = trace[name].ndim
        explanation = trace.explain(name, _full_index(head if ndim == 3 else None, row, col, ndim))
        st.latex(ctx.t.math(explanation.latex))
        plain = st.expander(ctx.t("view.plain"), key=f"plain.{key}", on_change="rerun")
        if plain.open:  # the text is drawn only when asked for: an edit redraws one element less
            with plain:
                st.code(ctx.t.plain(explanation.text), language=None, wrap_lines=True)


# ---- editing weights --------------------------------------------------------------------------------------

def edit_param(name: str, head: int | None = None, rows: list[int] | None = None, one_cell: bool = False):
    """An editor for a parameter (one head's slice, optionally only some rows) in an expander, with a reset
    button: a grid, or one cell at a time (row, column, number) for wide matrices and where one_cell asks for
    the lighter widget (an edit then redraws a number input, not a grid)."""
    ctx = context.get()
    value = ctx.model.params[name]
    axes = param_axes(ctx.model.vocab.tokens, name, value.shape)
    matrix = value[head] if head is not None else value  # per-head weights and biases: one head's slice
    matrix = matrix if matrix.ndim == 2 else matrix[None, :]
    row_ids = rows if rows is not None else list(range(matrix.shape[0]))
    row_labels = [axes[-2][i] for i in row_ids] if matrix.shape[0] > 1 or value.ndim - (head is not None) > 1 \
        else [name]
    title = name + (f" · {ctx.t('view.head')} {head + 1}" if head is not None else "")
    box = st.expander(ctx.t("view.edit", name=title), key=f"open.{name}.{head}", on_change="rerun")
    if not box.open:  # the editor is drawn (and costs a rerun's time) only while its expander is open
        return
    with box:
        version = st.session_state.get("edit_version", 0)
        key = f"edit.{name}.{head}.{version}"
        columns = unique(axes[-1])
        grid = matrix.shape[1] <= TABLE_COLS and not one_cell
        st.caption(ctx.t("view.edit_hint" if grid else "view.edit_hint_cell"))
        if grid:
            frame = _editor_frame(key, lambda: pd.DataFrame(matrix[row_ids], index=unique(row_labels), columns=columns))
            st.data_editor(frame, key=key, disabled=["_index"],  # the row labels are tokens or positions, not weights
                           on_change=_on_edit, args=(key, name, head, row_ids, columns, value.ndim))
        else:
            _single_cell_editor(ctx, name, head, row_ids, row_labels, axes[-1], key, value.ndim)
        if any(p == name for p, _, _ in ctx.state.edits):
            st.button(ctx.t("view.reset", name=name), key=f"reset.{key}",
                      on_click=lambda: context.set_state(st.session_state.state.without_edits(name)))


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
    st.session_state["edit_error"] = context.get().t(
        "msg.edit_bad", param=name, index=",".join(map(str, index)), value=typed)


def _single_cell_editor(ctx, name, head, row_ids, row_labels, col_labels, key, ndim):
    cell = _row_of_widgets()
    r = _position_picker(cell, ctx.t("view.row"), row_labels, f"{key}.r")
    c = _position_picker(cell, ctx.t("view.col"), col_labels, f"{key}.c")
    index = _full_index(head, row_ids[r], c, ndim)
    current = float(ctx.model.params[name][index])
    cell.number_input(name, value=current, key=f"{key}.v.{index}", format="%.6g", on_change=_on_cell_edit,
                       args=(f"{key}.v.{index}", name, index))


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
    typed = st.session_state[widget_key]
    try:
        context.set_state(st.session_state.state.with_edit(name, index, check_weight(typed)), reset_editors=False)
    except ValueError:
        _report_bad_edit(name, index, typed)
        context.set_state(st.session_state.state)
