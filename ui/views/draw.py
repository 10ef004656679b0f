"""How a page draws: a formula with room around it, a matrix as numbers, a chart at the type's scale, and each
drawing made once per trace."""
from __future__ import annotations

import weakref

import streamlit as st

from ui.core import session_store
from ui.core.figures import CELL_WIDTH, PROJECTOR, TEXT_COLS, at_scale
from ui.core.format import arrow, bmatrix, table
from ui.core.labels import unique

LATEX_CELLS = 8  # matrices up to 8 rows are also written out as a bmatrix ...
LATEX_COLS = 6  # ... up to 6 columns: 8 six-digit numbers with signs are wider than the page (a table holds them)
TABLE_COLS = 16  # wider matrices are shown as heatmaps only
# KaTeX ends a vertical list (a block of lines, a matrix, a fraction, a script) with a 2 px strut that a -2 px margin
# takes back (a Safari workaround): at a formula's right end the strut reaches 2 px past the formula, and Streamlit's
# formula box (overflow-x: auto) scrolls by those 2 px, a scrollable region no key can reach (axe-core's
# scrollable-region-focusable, tests/test_readable.py). A thin space after the formula holds it.
HOLD = r"\kern0.15em"
ROOM = (r"\begin{gathered}\\[-1em]", r"\\[-1em]{}\end{gathered}" + HOLD)  # empty lines around a formula (latex())
CHART_FORMATS = ("png", "svg")  # what a chart's download button saves (the Export section's choice, ui/views/exports)
CHART_FORMAT = "chart_format"  # the session's choice


def latex(tex: str):
    """st.latex of lines (one gathered) between empty lines. Streamlit's formula box hides what overflows it, and
    KaTeX 0.16 puts a first line taller than text (a fraction, a matrix, a superscript) a few pixels above the box
    and a deep last one below it: the scaled step's drill-down lost the top of its numerator (5 px), a glance the
    top of its brackets, the dropout formula the foot of its fraction (3 px) (tests/test_readable.py,
    CUT_FORMULAS). The empty lines make room; HOLD, room at its right end."""
    st.latex(ROOM[0] + tex + ROOM[1])


def text_and_formula(text: str, tex: str):
    """A sentence and its formula (with latex()'s room) in one element: every element is a message to send."""
    st.markdown(f"{text}\n\n$$\n{ROOM[0]}{tex}{ROOM[1]}\n$$")


_DRAWINGS = {}  # id(trace) -> {what: its drawing}, for as long as the trace lives (see drawing)


def drawing(trace, what: tuple, draw):
    """What `draw()` makes of a trace (a formula, a chart, a cell's arithmetic), made once per trace: a trace is one
    state's run, shared by every session in that state (ui/core/runs.run), so the sessions of a class following
    their teacher, or a reader going back to a step, draw it once. `what` names the drawing and all it depends on
    besides the trace. Forgotten with the trace."""
    drawings = _DRAWINGS.get(id(trace))
    if drawings is None:
        drawings = _DRAWINGS[id(trace)] = {}
        weakref.finalize(trace, _DRAWINGS.pop, id(trace), None)
    if what not in drawings:
        drawings[what] = draw()
    return drawings[what]


def numbers(ctx, matrix, rows, cols, label=None, digits=None, labelled=False):
    """A matrix as a bmatrix when small (unless its rows must be labelled), as a table when wider; the widest are
    left to the heatmap. digits: the reader's setting (the page's context, ctx) unless given."""
    digits = digits or ctx.state.digits
    matrix = matrix if matrix.ndim == 2 else matrix[None, :]
    if not (labelled or as_table(matrix)):
        latex((f"{label} = " if label else "") + bmatrix(matrix, digits))
    elif matrix.shape[1] <= TABLE_COLS:
        cells = dict(zip(unique(cols), zip(*table(matrix, digits))))
        st.dataframe(arrow({"": unique(rows), **cells}), hide_index=True,
                     column_config={"": st.column_config.TextColumn(pinned=True)})  # the row labels
    else:
        st.caption(ctx.t("view.big", rows=matrix.shape[0], cols=matrix.shape[1]))


def as_table(matrix) -> bool:
    """Whether numbers() writes a matrix as a table (or leaves it to the heatmap): too big for a bmatrix."""
    return not (matrix.shape[0] <= LATEX_CELLS and matrix.shape[1] <= LATEX_COLS)


def type_scale(ctx) -> float:
    """How much larger than normal a chart's type is: a presenter's projector type (figures.PROJECTOR), or 1."""
    return PROJECTOR if ctx.state.present else 1.0


def plot(ctx, chart, key: str | None = None, where=st, **options):
    """A chart in `where` (the page, a column, a placeholder), its type presenter mode's size when presenting (the
    page's context, ctx, says), with plotly's mode bar on hover reduced to its download button."""
    config = chart_config(ctx.t, ctx.state.lang, key)
    return where.plotly_chart(at_scale(chart, type_scale(ctx)), key=key, config=config, **options)


def chart_config(t, lang: str, key: str | None) -> dict:
    """Plotly's options: the mode bar holds only "download" (no zoom or selection tools beside the heatmaps' click),
    saving the session's CHART_FORMAT at twice the screen's resolution, its tip in the reader's language (plotly's
    own words are English: its locale takes them from the catalog)."""
    fmt = session_store.get(CHART_FORMAT, CHART_FORMATS[0])
    tip = t("export.chart_tip", format=fmt.upper())
    return {"displayModeBar": "hover", "modeBarButtons": [["toImage"]], "displaylogo": False,
            "toImageButtonOptions": {"format": fmt, "scale": 2, "filename": key or "chart"},
            "locale": lang, "locales": {lang: {"dictionary": {"Download plot as a PNG": tip, "Download plot": tip}}}}


def chart_width(n_cols):
    """A heatmap with numbers in its cells asks for CELL_WIDTH per column (and the labels' and colour bar's 200 px),
    which Streamlit caps at the main column's width; wider matrices take the whole width."""
    return "stretch" if n_cols > TEXT_COLS else 200 + CELL_WIDTH * n_cols


def head_matrix(value, head):
    value = value if head is None or value.ndim < 3 else value[head]
    return value if value.ndim == 2 else value[None, :]


def full_index(head, row, col, ndim):
    """The parameter's index of a cell of the editor (which shows one head's slice of per-head weights)."""
    slice_ndim = ndim - (head is not None)
    return ((head,) if head is not None else ()) + ((row, col) if slice_ndim > 1 else (col,))


def derivation(ctx, key: str, draw, **values):
    """A derivation (ui.lessons.derivation_views) in an expander titled by the catalog's f"derive.{key}" (with
    `values`): `draw` runs only while it is open, so a closed one is one element and costs no sympy; none on a following
    student's page (Context.reading), which shows the teacher's view."""
    if ctx.reading:
        return
    box = st.expander(ctx.t(f"derive.{key}", **values), key=f"derive.{key}", icon=":material/function:",
                      on_change="rerun")
    if box.open:
        with box:
            draw()
