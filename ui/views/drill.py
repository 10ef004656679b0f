"""A step's drill-down: the cell picked on the heatmap (or from a list, or from row and column pickers) and the
arithmetic that made its number (engine.explain)."""
from __future__ import annotations

import streamlit as st

from engine.explain import LINE_WIDTH
from ui.core import session_store
from ui.core.figures import PROJECTOR
from ui.core.format import difference, fmt
from ui.core.i18n import literal
from ui.core.labels import FIRST, cell_label, step_name_key
from ui.views.draw import drawing, full_index, head_matrix, latex, text_and_formula
from ui.views.drawn import from_link, show_in_link
from ui.views.pickers import CELL_LIST, as_position, cell_list, clamped, position_picker, row_of_widgets


def selection(t, key, n_rows, n_cols):
    """The drill-down's cell, within the matrix (see pickers.clamped), or the one the page's link asks for."""
    asked = from_link(t, "cell", lambda cell: cell[0] < n_rows and cell[1] < n_cols, (0, 0))
    if asked is not None:
        _pick(key, *asked)
    row, col = (clamped(session_store.get(f"{axis}.{key}"), n) for axis, n in (("row", n_rows), ("col", n_cols)))
    _pick(key, row, col)
    show_in_link("cell", (row, col), (0, 0))
    return row, col


def on_click(key, n_rows, n_cols):
    """A click on the heatmap picks the drill-down's cell; a forged selection (not a point of the matrix) is
    ignored."""
    def callback():
        points = session_store.widget(f"chart.{key}").selection.points
        point = points[0] if points and isinstance(points[0], dict) else {}
        row, col = as_position(point.get("y"), n_rows), as_position(point.get("x"), n_cols)
        if row is not None and col is not None:
            _pick(key, row, col)
    return callback


def _pick(key, row, col):
    """The drill-down's cell into its pickers' widgets (row.KEY, col.KEY)."""
    session_store.update({f"row.{key}": row, f"col.{key}": col})


def drill_down(ctx, trace, name, head, key, rows, cols, unedited=None, shown=None):
    """The cell's pickers, its arithmetic, the change an edit made to it (`unedited`: the matrix before) and the
    arithmetic as plain text when asked, in a box (shown: the step's columns drawn, if not all: a long vocabulary's).
    On a following student's page (Context.reading): the teacher's cell, named, and its arithmetic, in one element."""
    column = (lambda col: col) if shown is None else shown.__getitem__  # the step's column of a drawn one
    if ctx.reading:
        row, col = session_store.widget(f"row.{key}"), session_store.widget(f"col.{key}")  # (selection)
        cell = ctx.t("view.cell", row=literal(rows[row]), col=literal(cols[col]))  # a token is the reader's text
        explanation = _explained(ctx, trace, name, head, row, column(col))
        text_and_formula(f"**{ctx.t('view.drill')}** {cell}", ctx.t.words(explanation.latex))
        return
    with st.container(border=True):
        row, col = _drill_cell(ctx, key, rows, cols)
        explanation = _explained(ctx, trace, name, head, row, column(col))
        latex(ctx.t.words(explanation.latex))
        if unedited is not None:
            now, was = head_matrix(ctx.trace[name], head)[row, column(col)], unedited[row, col]
            st.caption(ctx.t("view.unedited_value", value=fmt(was, ctx.state.digits),
                             change=fmt(difference(now, was), ctx.state.digits)))
        plain = st.expander(ctx.t("view.plain"), key=f"plain.{key}", on_change="rerun")
        if plain.open:  # the text is drawn only when asked for: an edit redraws one element less
            with plain:
                st.code(ctx.t.words(explanation.text), language=None, wrap_lines=True)


def _explained(ctx, trace, name, head, row, col):
    """The arithmetic that made a cell's number, once per trace, as the drill-down writes it (cell_explanation)."""
    ndim = trace[name].ndim
    index = full_index(head if ndim == 3 else None, row, col, ndim)
    width = round(LINE_WIDTH / PROJECTOR) if ctx.state.present else LINE_WIDTH  # a presenter's: shorter lines
    title = ctx.t(step_name_key(name))
    return drawing(trace, ("explain", name, index, ctx.state.digits, width, title),  # the text's digits too
                   lambda: cell_explanation(trace, name, index, title, ctx.state.digits, width))


def cell_explanation(trace, name, index, title, digits, width=LINE_WIDTH):
    """The arithmetic of a step's cell at `index` (the engine's, from 0) as the drill-down writes it: named as the
    page names the matrix, its head's (Q_1; title: the step's name on screen, where it has no symbol), with every
    position counted from FIRST; `digits` significant digits in the LaTeX and the text."""
    head = index[0] if len(index) == 3 else None
    label = cell_label(trace.step(name).symbol, head, title, index[-2:])  # the matrix's row and column
    return trace.explain(name, index, digits, digits, width, first=FIRST, label=label)


def _drill_cell(ctx, key, rows, cols):
    """The drill-down's cell (the state's row.KEY and col.KEY, which a click on the heatmap and the link set too):
    from one list of cells, its label the drill-down's title, where the matrix is small; else a row and a column
    picker under the title."""
    title = f"{ctx.t('view.drill')} {ctx.t('view.drill_hint')}"  # plain: a label's Markdown is its aria-label too
    if len(rows) * len(cols) > CELL_LIST:
        st.markdown(f"**{ctx.t('view.drill')}** {ctx.t('view.drill_hint')}")
        pickers = row_of_widgets()
        return (position_picker(pickers, ctx.t("view.row"), rows, f"row.{key}"),
                position_picker(pickers, ctx.t("view.col"), cols, f"col.{key}"))
    row, col = session_store.widget(f"row.{key}"), session_store.widget(f"col.{key}")  # (selection)
    session_store.put(f"cell.{key}", row * len(cols) + col)
    cell_list(ctx.t, st, title, rows, cols, f"cell.{key}", on_change=_on_cell_pick, args=(key, len(rows), len(cols)))
    return row, col


def _on_cell_pick(key, n_rows, n_cols):
    """A cell picked from the drill-down's list, into the state's row.KEY and col.KEY; a forged position (not one of
    the list's) leaves the cell as it was."""
    position = as_position(session_store.widget(f"cell.{key}"), n_rows * n_cols)
    if position is not None:
        _pick(key, *divmod(position, n_cols))
