"""Weight editors: a parameter (one head's slice, some rows) edited in a grid with a row of sliders, or one cell at
a time; every edit goes into the state (state.with_edit), which the next run applies to the model."""
from __future__ import annotations

import re
from typing import NamedTuple

import pandas as pd
import streamlit as st

from ui.core import session, session_store
from ui.core.format import bmatrix_around
from ui.core.i18n import literal
from ui.core.labels import param_axes, param_tex, param_words_key, unique
from ui.core.session_store import EDIT_ERROR, EDIT_VERSION, EDITOR_FRAMES, STATE
from ui.core.state import check_weight, slider_range
from ui.views.draw import TABLE_COLS, full_index, latex
from ui.views.pickers import CELL_LIST, POSITION_LIST, as_position, cell_list, position_picker, row_of_widgets

SLIDER_WIDTH = 160  # a grid row's sliders, side by side, in pixels (wrapped onto more lines when many)


def edit_param(ctx, name: str, head: int | None = None, rows: list[int] | None = None, one_cell: bool = False):
    """An editor for a parameter (one head's slice, optionally only some rows) in an expander, with a reset
    button: a grid with a slider per cell of a chosen row, or one cell at a time (the cell, a number and a slider)
    for wide matrices and where one_cell asks for the lighter widget (an edit then redraws a number input, not a
    grid). Either shows the matrix with its chosen cell boxed. ctx: the page's context, whose model it edits; its
    callbacks are given it too (they make no context of their own: the next run does, from the state they write)."""
    value = ctx.model.params[name]
    axes = param_axes(ctx.model, name, value.shape)
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
        version = session_store.get(EDIT_VERSION, 0)
        key = f"edit.{name}.{head}.{version}"
        columns = unique(axes[-1])
        grid = matrix.shape[1] <= TABLE_COLS and not one_cell
        editor = _Editor(name, head, row_ids, value.ndim, key)
        if grid:
            st.caption(ctx.t("view.edit_hint") + " " + ctx.t("view.slide_hint"))
            frame = _editor_frame(key, lambda: pd.DataFrame(matrix[row_ids], index=unique(row_labels), columns=columns))
            st.data_editor(frame, key=key, disabled=["_index"],  # the row labels are tokens or positions, not weights
                           on_change=_on_edit, args=(ctx, key, name, head, row_ids, columns, value.ndim))
            _row_sliders(ctx, editor, row_labels, axes[-1])
            _marked_matrix(ctx, editor, matrix[row_ids], *_chosen(key, (len(row_ids), matrix.shape[1])), row_labels,
                           axes[-1])
            st.caption(ctx.t("view.edit_boxed"))
        else:
            _single_cell_editor(ctx, editor, matrix[row_ids], row_labels, axes[-1])
        if any(p == name for p, _, _ in ctx.edits):
            st.button(ctx.t("view.reset", name=f"${param_tex(name)}$"), key=f"reset.{key}",
                      on_click=lambda: session.set_state(ctx.without_edits(session_store.get(STATE), name)))


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
        return full_index(self.head, self.row_ids[row], col, self.ndim)


def _editor_frame(key, make):
    """The numbers an editor was opened with. Passing the same frame on every rerun keeps the grid's own
    record of what was typed; new numbers would make the grid reset itself and ask for a second rerun."""
    frames = session_store.setdefault(EDITOR_FRAMES, {})
    if not session_store.has(key) or key not in frames:  # a new editor, or one that left the page
        frames[key] = make()
    return frames[key]


def _on_edit(ctx, key, name, head, row_ids, columns, ndim):
    state, refused = session_store.get(STATE), False
    for row, cells in session_store.widget(key)["edited_rows"].items():
        for column, typed in cells.items():
            position = as_position(row, len(row_ids))
            if position is None or column not in columns:  # a forged cell, or a row label ("_index"): ignored,
                refused = True  # and the grid redrawn, as Streamlit would fail to write that cell into its own copy
                continue
            index = full_index(head, row_ids[position], columns.index(column), ndim)
            session_store.put(_chosen_key(key), (position, columns.index(column)))
            try:
                state = ctx.with_edit(state, name, index, check_weight(typed))
            except ValueError:
                _report_bad_edit(ctx.t, name, index, typed)
                refused = True
    session.set_state(state, reset_editors=refused)


def _report_bad_edit(t, name, index, typed):
    """What was typed, quoted as code: Markdown would make a link of "[x](//elsewhere)", math of $…$."""
    session_store.put(EDIT_ERROR, t(
        "msg.edit_bad", param=name, index=",".join(map(str, index)), value=literal(repr(typed))))


def _take_edit(ctx, name, index, typed):
    """One typed or slid weight into the state, or a message and the editors redrawn from the model."""
    try:
        state = ctx.with_edit(session_store.get(STATE), name, index, check_weight(typed))
        session.set_state(state, reset_editors=False)
    except ValueError:
        _report_bad_edit(ctx.t, name, index, typed)
        session.set_state(session_store.get(STATE))


def _single_cell_editor(ctx, editor, matrix, row_labels, col_labels):
    """The cell (from one list, the hint its label, or row and column pickers under the hint), the matrix around
    it (boxed), and its number typed or slid."""
    hint = ctx.t("view.edit_hint_cell") + " " + ctx.t("view.slide_hint")
    if len(row_labels) * len(col_labels) <= CELL_LIST:
        r, c = cell_list(ctx.t, st, hint, row_labels, col_labels, f"{editor.key}.cell")
    else:
        st.caption(hint)
        cell = row_of_widgets()
        r = position_picker(cell, ctx.t("view.row"), row_labels, f"{editor.key}.r")
        c = position_picker(cell, ctx.t("view.col"), col_labels, f"{editor.key}.c")
    _marked_matrix(ctx, editor, matrix, r, c, row_labels, col_labels)
    index = editor.index(r, c)
    typed_key = f"{editor.key}.v.{index}"
    number = row_of_widgets()
    number.number_input(f"${param_tex(editor.name, editor.head)}$", value=float(ctx.model.params[editor.name][index]),
                        key=typed_key, format="%.6g", on_change=_on_cell_edit,
                        args=(ctx, typed_key, editor.name, index))
    _weight_slider(ctx, number, ctx.t("view.slider"), editor, index, typed_key)


def _marked_matrix(ctx, editor, matrix, r, c, row_labels, col_labels):
    """The matrix being edited around its chosen cell (r, c), which is boxed; a caption says which part is shown
    when it is not all of it."""
    window, rows, cols = bmatrix_around(matrix, r, c, digits=ctx.state.digits)
    latex(f"{param_tex(editor.name, editor.head)} = {window}")
    if len(rows) < matrix.shape[0] or len(cols) < matrix.shape[1]:
        st.caption(ctx.t("view.edit_window", rows=f"{row_labels[rows[0]]}–{row_labels[rows[-1]]}",
                         cols=f"{col_labels[cols[0]]}–{col_labels[cols[-1]]}", n_rows=matrix.shape[0],
                         n_cols=matrix.shape[1]))


def _chosen_key(key):
    """Where a grid keeps its chosen cell (row, column): the one last typed or slid, or the first of the row last
    picked for sliders."""
    return f"{key}.chosen"


def _chosen(key, shape):
    """A grid's chosen cell, the first one until a row is picked or a cell changed (or if the matrix shrank)."""
    r, c = session_store.get(_chosen_key(key), (0, 0))
    return (r, c) if r < shape[0] and c < shape[1] else (0, 0)


def _row_sliders(ctx, editor, row_labels, col_labels):
    """Below a grid: a slider per cell of a row, once one is picked (none at first: an edit of a grid with a row of
    sliders costs the server about 1.5 times as much, bench/pages_bench.py on the FFN page)."""
    labels, key = unique(row_labels), f"{editor.key}.row"
    if len(labels) <= POSITION_LIST:  # one click on a row of buttons (a list's combobox opens on a second one)
        r = st.segmented_control(ctx.t("view.slider_pick"), range(len(labels)), format_func=labels.__getitem__,
                                 key=key, on_change=_on_row_pick, args=(editor.key, len(labels)))
    else:
        r = st.selectbox(ctx.t("view.slider_row"), range(len(labels)), index=None, format_func=labels.__getitem__,
                         placeholder=ctx.t("view.slider_pick"), key=key, on_change=_on_row_pick,
                         args=(editor.key, len(labels)))
    if r is None:
        return
    sliders = row_of_widgets()
    for c, label in enumerate(col_labels):
        _weight_slider(ctx, sliders, f"{ctx.t('view.col')} {_plain(label)}", editor, editor.index(r, c), editor.key,
                       width=SLIDER_WIDTH, cell=(r, c))


def _on_row_pick(key, n_rows):
    """A row picked for sliders: its first cell is the chosen one; a forged row leaves the choice as it was."""
    r = as_position(session_store.widget(f"{key}.row"), n_rows)
    if r is not None:
        session_store.put(_chosen_key(key), (r, 0))


def _weight_slider(ctx, container, label, editor, index, typed_key, width="stretch", cell=None):
    """A slider for one weight, around its value (state.slider_range). A new value is a new range, so a new
    slider that starts at it. A forged NaN, ±inf or number outside the range is replaced by Streamlit with the
    value the slider was drawn with, before any callback: nothing changes. cell: a grid's (row, column) of it,
    which a slide makes the chosen one."""
    low, high, step, start, decimals = slider_range(ctx.model.params[editor.name][index])
    key = f"{editor.key}.slider.{index}"  # ends in ")": not a typed editor's key (bench/pages_bench.py)
    container.slider(label, min_value=low, max_value=high, value=start, step=step, format=f"%.{decimals}f",
                     key=key, width=width, on_change=_on_slide,
                     args=(ctx, key, typed_key, cell, editor.name, index, decimals))


def _on_slide(ctx, key, typed_key, cell, name, index, decimals):
    """A released slider: its number, rounded to the slider's steps, is taken as if typed, and the typed editor
    shows it: the number input is given it (the browser keeps an input's own number otherwise), the grid is
    drawn anew from the edited model. (Written on purpose: .streamlit/config.toml silences Streamlit's warning
    about a widget given both a value and a number through session state.)"""
    slid = round(session_store.widget(key), decimals)
    _take_edit(ctx, name, index, slid)
    if cell is not None:  # a grid's
        session_store.put(_chosen_key(typed_key), cell)
        session_store.pop(typed_key, None)
        session_store.get(EDITOR_FRAMES, {}).pop(typed_key, None)
    else:
        session_store.put(typed_key, slid)


def _plain(label: str) -> str:
    """A token as a widget label, which Streamlit reads as Markdown: every ASCII punctuation mark escaped."""
    return re.sub(r"([!-/:-@\[-`{-~])", r"\\\1", label)


def _on_cell_edit(ctx, widget_key, name, index):
    _take_edit(ctx, name, index, session_store.widget(widget_key))
