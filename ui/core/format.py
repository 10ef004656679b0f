"""Numbers for people: sensible precision, scientific where needed, −∞ for minus infinity."""
import numpy as np
import pyarrow as pa

from engine.notation import num_tex as fmt_tex  # one rule for every printed number, the drill-down's LaTeX included
from engine.notation import significant as fmt

# The digits setting's default: 4 significant digits keep the two decimals the blog prints for every number below
# 100 (11.46, −0.58, 105.2 of 105.21), where 3 would round 11.46 to 11.5; a 6-column matrix of signed 4-digit
# numbers fits a 1280-px page, and a heatmap cell holds one at 12 px.
DIGITS = 4
DIGITS_RANGE = (2, 8)  # 8: as many as the engine's plain text writes by default; below 2 a number says little
LATEX_MAX = 8  # a bmatrix longer or wider than this elides its middle with \cdots / \vdots


def _elide(n: int) -> list:
    """Indices to show along an axis of length n, with None where \\cdots goes."""
    if n <= LATEX_MAX:
        return list(range(n))
    return list(range(LATEX_MAX - 2)) + [None] + [n - 2, n - 1]


def decimals(value: float, places: int) -> str:
    """A number with `places` decimals (a log-probability's -9.559), its minus the one fmt writes (−)."""
    return f"{value:.{places}f}".replace("-", "−")


def bmatrix(matrix, digits: int = 6) -> str:
    """A 1-D or 2-D array as a LaTeX bmatrix, eliding the middle beyond LATEX_MAX rows or columns."""
    matrix = np.atleast_2d(matrix)
    rows = []
    for i in _elide(matrix.shape[0]):
        cells = [r"\cdots" if j is None else (r"\vdots" if i is None else fmt_tex(matrix[i, j], digits))
                 for j in _elide(matrix.shape[1])]
        if i is None:
            cells = [r"\ddots" if c == r"\cdots" else c for c in cells]
        rows.append(" & ".join(cells))
    return r"\begin{bmatrix}" + r" \\ ".join(rows) + r"\end{bmatrix}"


def printed_width(matrix, digits: int = 6) -> int:
    """How many characters wide a matrix is, written as bmatrix writes it: its columns' widest numbers, and a
    separator's worth between columns."""
    cells = table(matrix, digits)
    return sum(max(len(row[j]) for row in cells) for j in range(len(cells[0]))) + 2 * (len(cells[0]) - 1)


def bmatrix_around(matrix, row: int, col: int, size=(LATEX_MAX, 6), digits: int = 6) -> tuple[str, range, range]:
    """Up to size = (rows, columns) numbers of a matrix around one cell, which is boxed, with \\cdots and \\vdots
    where the matrix goes on: a 512 × 64 weight stays readable and quick to draw. Returns the LaTeX and the rows
    and the columns shown."""
    matrix = np.atleast_2d(matrix)
    rows, cols = _window(matrix.shape[0], row, size[0]), _window(matrix.shape[1], col, size[1])
    left, right = [r"\cdots"] * (cols.start > 0), [r"\cdots"] * (cols.stop < matrix.shape[1])
    lines = []
    for i in rows:
        cells = [fmt_tex(matrix[i, j], digits) for j in cols]
        if i == row:
            cells[col - cols.start] = rf"\boxed{{{cells[col - cols.start]}}}"
        lines.append(" & ".join(left + cells + right))
    dots = " & ".join([""] * len(left) + [r"\vdots"] * len(cols) + [""] * len(right))
    lines = [dots] * (rows.start > 0) + lines + [dots] * (rows.stop < matrix.shape[0])
    return r"\begin{bmatrix}" + r" \\ ".join(lines) + r"\end{bmatrix}", rows, cols


def _window(n: int, i: int, size: int) -> range:
    """size positions of range(n) (all of them if fewer) with i near the middle."""
    start = min(max(i - size // 2, 0), max(n - size, 0))
    return range(start, min(start + size, n))


def difference(after, before) -> np.ndarray:
    """after − before, cell by cell, and 0 where both hold the same number: a masked −∞ that stays −∞ did not
    change (NumPy's −∞ − (−∞) is NaN)."""
    after, before = np.asarray(after, dtype=float), np.asarray(before, dtype=float)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.where(after == before, 0.0, after - before)


def arrow(columns: dict) -> pa.Table:
    """A table for st.dataframe, by column ({name: values}). Streamlit sends Arrow: from a pandas frame a small
    table costs ~1.6 ms of every rerun that draws it, built directly ~0.1 ms."""
    return pa.table({name: _column(list(values)) for name, values in columns.items()})


def _column(values: list) -> pa.Array:
    """A column of text typed as such: pyarrow infers a type by looking at every value (~4 times the time)."""
    return pa.array(values, pa.string()) if values and all(isinstance(v, str) for v in values) else pa.array(values)


def table(matrix, digits: int = 6) -> list[list[str]]:
    """The cells of a 2-D array as display strings."""
    return [[fmt(x, digits) for x in row] for row in np.atleast_2d(matrix)]
