"""Plotly figures, built from arrays and labels only (pure: no Streamlit)."""
import base64
import html
import re

import numpy as np
import plotly.graph_objects as go
from plotly.colors import get_colorscale

from ui.core.format import DIGITS, fmt, table

DIVERGING = get_colorscale("RdBu_r")  # ColorBrewer red-blue: colour-blind safe, centred at 0 for signed values
SEQUENTIAL = get_colorscale("Blues")  # for values that cannot be negative (weights, probabilities, ReLU output)
TEXT_CELLS = 200  # write the numbers inside the cells up to this many cells
TEXT_COLS = 8  # ... and when the cells are wide enough (at most this many columns)
TEXT_SIZE = 14  # px, the numbers in the cells: readable on a projector (plotly's own size shrinks with the cells)
LABEL_SIZE = 12  # px, the axis and colour-bar labels (plotly's default)
COLORBAR = {"thickness": 12, "exponentformat": "power"}  # ticks 4×10⁻⁴ as the cells write them, not plotly's 400μ
PROJECTOR = 1.5  # presenter mode's type, times the normal: numbers, labels and formulas read from the back of a room
TEXT_WIDTH = 760  # px, estimated (CHAR_WIDTH): the numbers are written only when a row of each column's widest
# fits it. At 1280 px with the sidebar open a step heatmap has ~690 px of plot, where 8 columns of −0.03525 fit
CHAR_WIDTH = 0.6  # of TEXT_SIZE: a character's width, generous (a digit of plotly's sans-serif is ~0.5)
HEIGHT = (180, 640)  # px, a heatmap's least and greatest height
FRAME = 90  # px of a heatmap's height that are not rows: the column labels on top and the margins
ROW = (34, 80)  # px, a row's height: the least, and the most a few rows with numbers get (square-ish cells)
SLIDE_ROW = 46  # px, the most on a presenter's slide: its numbers (21 px) with room, and the step under 720 px
SLIDE_FRAME = 66  # px, FRAME on a slide: what the column labels and margins take (FRAME is generous)
CELL_WIDTH = 200  # px a column of numbers asks for (draw.chart_width): 2.5 times a short row's height
CLICK_CELLS = 30000  # above this many cells the click layer is left out (pickers still work)
LABELLED_COLS = 128  # up to this many columns the server writes each cell's hover text
MARKED_COLS = 256  # at most this many markers a row: wider rows mark every k-th column, 2.7 px apart at PLOT_WIDTH
BAR_ROOM = 1.35  # a bar chart's axis runs this many times its longest bar: room for that bar's number after it
MARGIN = {"l": 10, "r": 10, "t": 10, "b": 10}
MARKERS = {"type": "scatter", "mode": "markers", "marker": {"symbol": "square", "size": 24, "opacity": 0},
           "showlegend": False}  # the click layer's invisible markers
ALL_LABELS = 16  # an axis of up to this many columns labels each: 16 of two digits fit a 400-px phone's ~270-px plot
NUMBERED_LABELS = 12  # at most this many labels along a longer axis numbered 1..n: 32 labelled each overlapped there
PLOT_WIDTH = 687  # px, a step heatmap's plot at 1280 px with the sidebar open (measured): a cell is this / columns


class Chart(go.Figure):
    """A figure already in the form plotly.js reads: plain dicts, NumPy arrays as typed arrays (base64). Streamlit
    asks a plotly figure only for its dict (st.plotly_chart: plotly.tools.return_figure_from_figure_or_data), so
    plotly's own objects, one per property, are not made: they cost 0.7-1 ms per chart on every rerun, a quarter
    of a step page's CPU. Nothing else of go.Figure is available; go.Figure(chart.to_dict()) validates it
    (tests). No plotly template: Streamlit's theme styles the chart, and the default template would add ~7 kB to
    every chart sent."""

    def __init__(self, data: list[dict], layout: dict):  # go.Figure's __init__ is what is skipped
        self._wire = {"data": data, "layout": {"template": {}, **layout}}

    def to_dict(self) -> dict:
        return self._wire


def heatmap(matrix, row_labels, col_labels, selected=None, marked=(), digits=DIGITS, scale=1.0) -> Chart:
    """A labelled heatmap; an invisible marker on every cell centre makes each cell clickable. The selected cell
    (row, column) has a thick frame, the marked ones (e.g. the cells an edit changed) a thin one. Its numbers, in
    the cells and on hover, have `digits` significant digits, written `scale` times the normal size (the labels'
    size is at_scale's).

    A click selects the nearest marker, whose x and y are the cell's column and row; plotly's own heatmap
    returns no selection in Streamlit, so the markers carry it. This runs for every chart on every rerun, so
    the figure is built from plain dicts in the form plotly.js reads (see Chart); tests validate the same dicts.
    """
    values = np.atleast_2d(np.asarray(matrix, dtype=float))
    rows, cols = values.shape
    finite = np.where(np.isfinite(values), values, np.nan)  # −∞ cells are drawn empty and labelled
    signed = bool(np.nanmin(finite) < 0) if np.isfinite(finite).any() else False
    limit = float(np.nanmax(np.abs(finite))) if np.isfinite(finite).any() else 1.0
    data = [{"type": "heatmap", "z": typed_array(finite),
             "x": typed_array(np.arange(cols)), "y": typed_array(np.arange(rows)),
             "colorscale": DIVERGING if signed else SEQUENTIAL, "zmin": -limit if signed else 0, "zmax": limit or 1,
             "hoverinfo": "skip", "colorbar": COLORBAR}]
    if signed:
        data[0]["zmid"] = 0
    labelled = cols <= LABELLED_COLS and rows * cols <= CLICK_CELLS
    cells = table(values, digits) if labelled else None  # the cells' text and hover text, written once
    text = cells is not None and rows * cols <= TEXT_CELLS and cols <= TEXT_COLS and _fits(cells, TEXT_SIZE * scale)
    if text:
        data[0].update(text=cells, texttemplate="%{text}", textfont={"size": TEXT_SIZE * scale})
    if rows * cols <= CLICK_CELLS:  # the hover text and the click both come from the invisible markers
        data += _click_layer(values, row_labels, col_labels, digits, cells)
    layout = {"height": _height(rows, text, scale), "margin": MARGIN,
              "dragmode": False, "clickmode": "event+select", "hovermode": "closest", "hoverdistance": -1,
              "xaxis": {**_ticks(col_labels), "side": "top", "range": [-0.5, cols - 0.5]},
              "yaxis": {**_ticks(row_labels), "autorange": "reversed"}}
    frames = [_frame(i, j, 1.5) for i, j in marked] + ([_frame(*selected, 3)] if selected is not None else [])
    if frames:
        layout["shapes"] = frames
    return Chart(data, layout)


def at_scale(chart: Chart, scale: float) -> Chart:
    """The chart with its labels, axis titles, legend and colour bars `scale` times their normal size, or the chart
    itself at 1. Each size is written out: Streamlit's theme sizes them from the page's root type when a chart is
    first drawn, and a chart drawn before presenter mode's style sheet arrived (or drawn again unchanged) kept
    the normal 12 px."""
    if scale == 1.0:
        return chart
    font = {"size": LABEL_SIZE * scale}
    wire = chart.to_dict()
    layout = {**wire["layout"], "font": font, "legend": {**wire["layout"].get("legend", {}), "font": font}}
    for axis in {"xaxis", "yaxis", *(name for name in layout if re.fullmatch(r"[xy]axis\d*", name))}:
        shown = layout.get(axis, {})
        title = shown.get("title")
        title = {"text": title} if isinstance(title, str) else title
        layout[axis] = {**shown, "tickfont": font, **({"title": {**title, "font": font}} if title else {})}
    data = [{**trace, "colorbar": {**trace["colorbar"], "tickfont": font}} if "colorbar" in trace else trace
            for trace in wire["data"]]
    return Chart(data, layout)


def writes_numbers(chart: Chart) -> bool:
    """Whether a heatmap writes its numbers in its cells."""
    return "text" in chart.to_dict()["data"][0]


def _fits(cells, size) -> bool:
    """Whether the numbers fit their cells at `size` px: each column's widest, and the rows' height."""
    wide = max(len(cell) for row in cells for cell in row) * CHAR_WIDTH * size + 8
    return wide * len(cells[0]) <= TEXT_WIDTH and FRAME + len(cells) * 2 * size <= HEIGHT[1]


def _height(rows, text, scale=1.0) -> int:
    """Rows with numbers as high as they can be up to ROW[1] (a few rows of cells as wide as CELL_WIDTH look
    square-ish; SLIDE_ROW on a projector, whose screen holds the step's heading and formula too), else ROW[0];
    within HEIGHT."""
    frame, most = (FRAME, ROW[1]) if scale == 1 else (SLIDE_FRAME, SLIDE_ROW)
    row = min(most, max(ROW[0], (HEIGHT[1] - frame) // rows)) if text else ROW[0]
    return min(HEIGHT[1], max(HEIGHT[0], row * rows + frame))


def _frame(i, j, width) -> dict:
    return {"type": "rect", "x0": j - 0.5, "x1": j + 0.5, "y0": i - 0.5, "y1": i + 0.5,
            "line": {"color": "#111", "width": width}}


def cell_markers(cell_px: float) -> dict:
    """Invisible square markers as wide as a cell of `cell_px` (24 px at most, 6 at least). Plotly's hover, and so
    the click, takes the last of the markers within half a marker (3 px at least) of the mouse: 24-px markers on
    narrower cells named a cell up to 12 px right of the mouse (the next one in a 64-column matrix)."""
    return {**MARKERS, "marker": {**MARKERS["marker"], "size": round(min(24.0, max(6.0, 0.9 * cell_px)), 1)}}


def _click_layer(values, row_labels, col_labels, digits, cells) -> list[dict]:
    """Invisible markers on the cell centres, which carry the hover text and the click. Up to LABELLED_COLS
    columns each marker has its text; in wider matrices one trace per row names the row and its columns, and the
    browser writes the number (a text per cell of a (2, 2048) step cost ~10 ms of every rerun and 120 kB sent;
    a trace per row costs ~0.2 ms, too much for matrices of many short rows). A row's columns are placed by x0/dx
    (its y, the row, sets the number of markers: one byte each). A row wider than MARKED_COLS marks every k-th
    column only (the hover names the column it writes, the drill-down's column box reaches the others): every
    marker is an SVG node that plotly draws again at each of its redraws, and a 10 x 2048 step's 20,480 kept
    Chromium busy for a minute (a 2048-wide cell is a third of a pixel: no mouse picks one). cells: the values as
    text, up to LABELLED_COLS columns."""
    cols = values.shape[1]
    if cols <= LABELLED_COLS:
        r, c = np.meshgrid(range(values.shape[0]), range(cols), indexing="ij")
        return [{**cell_markers(PLOT_WIDTH / cols), "x": typed_array(c.ravel()), "y": typed_array(r.ravel()),
                 "hovertemplate": "%{text}<extra></extra>",
                 "text": [f"{as_text(row_labels[i])} · {as_text(col_labels[j])}: {cells[i][j]}"
                          for i, j in zip(r.ravel(), c.ravel())]}]
    step = -(-cols // MARKED_COLS)  # ceil: 1 up to MARKED_COLS columns, 2 for 512, 8 for 2048
    markers = cell_markers(PLOT_WIDTH * step / cols)
    heads = np.array([[f"{as_text(label)}: ", f"{as_text(label)}: −"] for label in col_labels[::step]],
                     dtype=object)  # a column's, by sign
    return [{**markers, "x0": 0, "dx": step, "y": typed_array(np.full(len(heads), i)), "meta": as_text(label),
             **_browser_row(row[::step], heads, digits)} for i, (label, row) in enumerate(zip(row_labels, values))]


def _browser_row(row, heads, digits) -> dict:
    """A wide row's hover text as fmt writes it, the browser writing the digits: each marker's text is its column
    and sign ("17: −"), its customdata the size, written by d3's .{digits}~g (plotly's d3 writes '-' for a minus
    and 0.0001234 for 1.234×10⁻⁴), and its hovertext what follows the digits: fmt's power of ten below 10⁻³
    ("×10⁻⁴", the size then fmt's mantissa), else nothing. The digits fmt and d3 write agree from 10⁻³ up to
    10^digits (and 10⁵); a row with a number beyond (d3: 1.235e+4) or not finite has fmt's text per cell instead,
    which costs what d3 saves (~1.5 ms a row of 2048): such numbers are rare, and a check of the row is cheap."""
    size = np.abs(row)
    shown = heads[np.arange(len(row)), (row < 0).astype(int)].tolist()
    if not np.all(size < 10.0 ** min(digits, 5) - 0.5):  # False for NaN, ±∞
        return {"customdata": table(row, digits)[0], "text": [head[0] for head in heads],
                "hovertemplate": "%{meta} · %{text}%{customdata}<extra></extra>"}
    digits_of = f"%{{meta}} · %{{text}}%{{customdata:.{digits}~g}}"
    powers = np.flatnonzero((size < 1e-3) & (size > 0))
    if not len(powers):
        return {"customdata": typed_array(size), "text": shown, "hovertemplate": digits_of + "<extra></extra>"}
    after = np.full(len(row), "", dtype=object)
    for j in powers:  # few: a row of 2048 random numbers has a handful
        mantissa, power = fmt(size[j], digits).split("×")
        size[j], after[j] = float(mantissa), "×" + power
    return {"customdata": typed_array(size), "text": shown, "hovertext": after.tolist(),
            "hovertemplate": digits_of + "%{hovertext}<extra></extra>"}


def _ticks(labels) -> dict:
    """An axis's labels: every one up to ALL_LABELS; an axis numbered 1, 2, …, n beyond that (a vector's
    dimensions) the multiples of a round step and 1, at most NUMBERED_LABELS (1, 5, 10, …, 30 for 32); any other
    axis (tokens) every step-th of its labels, at most ~24."""
    n = len(labels)
    if n > ALL_LABELS and list(labels) == [str(number) for number in range(1, n + 1)]:
        step = _round_step(n / NUMBERED_LABELS)
        positions = [0] * (step > 2) + list(range(step - 1, n, step))  # 1 too, where it stands apart
    else:
        positions = list(range(0, n, max(1, n // 24)))
    return {"tickvals": positions, "ticktext": [as_text(labels[i]) for i in positions], "showgrid": False,
            "zeroline": False}


def as_text(label) -> str:
    """A label as plotly writes it: plotly reads <b>, <s>, <br>, ... and entities in every text, so a translator's
    end token "</s>" closed a strikethrough never opened, which left the axis without it and made its margin's
    measure grow at each redraw (a blank band of 250 px over a heatmap): <, > and & go as entities, which plotly
    writes as the characters. (plotly knows no &quot;: quotes stay.)"""
    return html.escape(str(label), quote=False)


def _round_step(least: float) -> int:
    """The smallest of 1, 2, 5, 10, 20, 50, … that is at least `least`."""
    power = 1
    while True:
        for step in (power, 2 * power, 5 * power):
            if step >= least:
                return step
        power *= 10


def bars(labels, values, highlight=None, digits=DIGITS, counts=False) -> Chart:
    """Horizontal bars, largest on top, e.g. the next-token probabilities, each with its number (`digits`
    significant digits, as fmt writes it: 6.3×10⁻⁵) after its end. The numbers are a text trace, not the
    bars' own text, which plotly drops for a bar under a pixel long (a probability of 10⁻⁶); the axis runs
    BAR_ROOM past the longest bar to leave room for its number. Counts (the class quiz's answers per interval)
    hide the axis, whose ticks would read 0.2 of an answer: each bar's number says it."""
    colours = ["#1f77b4" if label != highlight else "#d62728" for label in labels]
    x = _numbers(values)
    names = [as_text(label) for label in labels]
    data = [{"type": "bar", "x": x, "y": names, "orientation": "h", "marker": {"color": colours}},
            {"type": "scatter", "mode": "text", "x": x, "y": names, "textposition": "middle right",
             "text": [fmt(v, digits) for v in values], "hoverinfo": "skip", "showlegend": False,
             "cliponaxis": False}]
    finite = np.asarray(values, dtype=float)[np.isfinite(values)]  # NaN where the naive softmax overflowed
    longest = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
    return Chart(data, {"height": max(160, 28 * len(labels) + 40), "margin": MARGIN, "showlegend": False,
                        "xaxis": {"range": [0, longest * BAR_ROOM], "visible": not counts,
                                  "exponentformat": "power"},  # ticks 2×10⁻⁴ as the bars' numbers, not 200μ
                        "yaxis": {"autorange": "reversed", "type": "category"}})  # a token or answer "1" is a name


def curves(x, series: dict, x_title: str, y_title: str, log_y: bool = False) -> Chart:
    """Lines over a shared x, e.g. the loss per training step or the learning-rate schedule."""
    data = [{"type": "scatter", "x": _numbers(x), "y": _numbers(y), "mode": "lines", "name": name}
            for name, y in series.items()]
    return Chart(data, {"height": 300, "margin": MARGIN, "showlegend": len(series) > 1,
                        "legend": {"orientation": "h", "y": 1.1}, "xaxis": {"title": {"text": x_title}},
                        "yaxis": {"title": {"text": y_title}, "type": "log" if log_y else "linear",
                                  **({"exponentformat": "power"} if log_y else {})}})  # 10⁻⁹, not plotly's 1n


def _numbers(values) -> dict:
    """Numbers as one float64 typed array (a list of NumPy scalars would cost a call per number)."""
    return typed_array(np.asarray(values, dtype=float))


def typed_array(array: np.ndarray) -> dict | list:
    """An array as plotly.js reads it: {"dtype", "bdata" (base64 of its bytes), "shape" if 2-D}, as plotly writes
    one. Whole numbers here are positions (never negative): they take the smallest unsigned type that holds them."""
    if array.size == 0:
        return []  # as plotly writes an empty array
    if array.dtype.kind in "iu":
        array = array.astype(np.min_scalar_type(int(array.max(initial=0))))
    array = np.ascontiguousarray(array)
    spec = {"dtype": array.dtype.str[1:], "bdata": base64.b64encode(array).decode("ascii")}
    if array.ndim > 1:
        spec["shape"] = ", ".join(map(str, array.shape))
    return spec
