"""A matrix too large to write out, as a PNG heatmap in the app's colours, its cells large enough to see on paper
(pure: NumPy and Pillow)."""
from __future__ import annotations

import io
from typing import NamedTuple

import numpy as np
from PIL import Image
from plotly.colors import unlabel_rgb

from ui.core.figures import DIVERGING, SEQUENTIAL

MAX_WIDTH, MAX_HEIGHT = 512, 256  # pixels of an image: a printed page's width shows no more
CELL = 24  # pixels a side of a cell at most (6.4 mm printed at 96 px to the inch), so a Markdown viewer, which
# shows an image at its own size, shows a 3 × 11 matrix as large as the HTML does
PANELS_PER_ROW = 4  # heads' panels side by side, then the next row of heads
GAP = 2  # pixels between two heads' panels
MASKED = 0  # the palette's entry for −∞ and NaN cells (light grey); colours are entries 1..255
SHADES = 255


class Heatmap(NamedTuple):
    png: bytes
    block: tuple[int, int]  # each square is the mean of this many (rows, columns) of cells
    signed: bool  # diverging colours centred at 0, else 0 to the largest
    cell: tuple[int, int]  # pixels (tall, wide) of a square: a band when only one side is long (2 × 512 numbers)
    size: tuple[int, int]  # the image's (width, height) in pixels


def heatmap(values: np.ndarray) -> Heatmap:
    """values (rows, cols), or (h, rows, cols) drawn as h panels, PANELS_PER_ROW to a row: red positive, blue
    negative (white 0) when any cell is negative, else white 0 to blue; −∞ and NaN grey. A side longer than the
    image's limit is binned: each square the mean of a block of cells. A square is up to CELL pixels a side, each
    side as long as the image's limit allows, so two rows of 512 are two bands, not two lines of pixels."""
    panels = values if values.ndim == 3 else np.atleast_2d(values)[None]  # (h, rows, cols)
    h, rows, cols = panels.shape
    across, down = min(h, PANELS_PER_ROW), _ceil(h, PANELS_PER_ROW)
    room = ((MAX_HEIGHT - GAP * (down - 1)) // down, (MAX_WIDTH - GAP * (across - 1)) // across)  # a panel's pixels
    block = (_ceil(rows, room[0]), _ceil(cols, room[1]))
    finite = np.where(np.isfinite(panels), panels, np.nan)
    any_finite = bool(np.isfinite(finite).any())
    signed = any_finite and bool(np.nanmin(finite) < 0)
    limit = float(np.nanmax(np.abs(finite))) if any_finite else 1.0
    shades = [_shades(_binned(panel, block), limit or 1.0, signed) for panel in finite]
    pixels = _grid(shades, across)  # (rows', cols') palette entries
    cell = tuple(max(1, min(CELL, most // n)) for most, n in zip((MAX_HEIGHT, MAX_WIDTH), pixels.shape))
    (rows, cols), (tall, wide) = pixels.shape, cell
    pixels = np.broadcast_to(pixels[:, None, :, None], (rows, tall, cols, wide)).reshape(rows * tall, cols * wide)
    image = Image.frombytes("P", pixels.shape[::-1], pixels.tobytes())
    image.putpalette(_palette(DIVERGING if signed else SEQUENTIAL))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return Heatmap(out.getvalue(), block, signed, cell, image.size)


def _grid(panels: list[np.ndarray], across: int) -> np.ndarray:
    """The panels `across` to a row, GAP pixels of MASKED between them (a short last row filled with MASKED)."""
    rows, cols = panels[0].shape
    empty = np.full((rows, cols), MASKED, np.uint8)
    panels = panels + [empty] * (-len(panels) % across)
    lines = [_joined(panels[i:i + across], axis=1) for i in range(0, len(panels), across)]
    return _joined(lines, axis=0)


def _joined(parts: list[np.ndarray], axis: int) -> np.ndarray:
    """The parts one after another along `axis`, GAP pixels of MASKED between two."""
    gap_shape = list(parts[0].shape)
    gap_shape[axis] = GAP
    gap = np.full(gap_shape, MASKED, np.uint8)
    return np.concatenate([part for p in parts for part in (p, gap)][:-1], axis=axis)


def _binned(panel: np.ndarray, block: tuple[int, int]) -> np.ndarray:
    """The mean of each block of cells (NaN cells left out; a block of NaN only stays NaN)."""
    (rows, cols), (br, bc) = panel.shape, block
    padded = np.full((_ceil(rows, br) * br, _ceil(cols, bc) * bc), np.nan)
    padded[:rows, :cols] = panel
    blocks = padded.reshape(padded.shape[0] // br, br, padded.shape[1] // bc, bc)
    counts = np.isfinite(blocks).sum(axis=(1, 3))
    sums = np.nansum(blocks, axis=(1, 3))
    return np.divide(sums, counts, out=np.full(sums.shape, np.nan), where=counts > 0)


def _ceil(n: int, d: int) -> int:
    return -(-n // d)


def _shades(panel: np.ndarray, limit: float, signed: bool) -> np.ndarray:
    """Palette entries 1..255 for the values, MASKED for NaN."""
    low = -limit if signed else 0.0
    position = np.clip((np.nan_to_num(panel, nan=low) - low) / (limit - low), 0, 1)
    return np.where(np.isnan(panel), MASKED, 1 + np.rint(position * (SHADES - 1))).astype(np.uint8)


def _palette(scale) -> list[int]:
    """256 RGB entries: MASKED grey, then the colour scale (plotly's [[position, "rgb(r, g, b)"], ...]) sampled."""
    stops = np.array([position for position, _ in scale])
    colours = np.array([unlabel_rgb(colour) for _, colour in scale], dtype=float)  # (stops, 3)
    at = np.linspace(0, 1, SHADES)
    sampled = np.stack([np.interp(at, stops, colours[:, c]) for c in range(3)], axis=1)
    return [220, 220, 220, *np.rint(sampled).astype(int).ravel().tolist()]
