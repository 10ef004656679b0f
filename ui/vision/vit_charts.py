"""What the ViT's encoder and head pages read off a trace and draw (pure: no Streamlit): a layer's steps cut into its
sub-layers, the class token's attention to the patches laid over the image, and the head's prediction."""
from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np

from ui.core.figures import COLORBAR, LABEL_SIZE, MARGIN, TEXT_SIZE, Chart
from ui.core.format import DIGITS, decimals, table
from ui.vision.pictures import digit_axes, digit_heatmap

PANELS_PER_ROW = 3  # the overlay's panels (the heads and their mean) side by side, up to this many to a row: ~230 px
# each in the main column of a 1280 px screen
PANEL_HEIGHT = 220  # px: an 8 x 8 image with its patches' numbers readable
PLACES = 2  # decimals of the weights written in the patches (the hover gives the digits setting's)
TITLE_ROOM = 34  # px above each row of panels: its titles
NUMBERED_PATCHES = 16  # the weights are written in the patches up to this many (patch size 2 and more on 8 x 8)
HEAT = [[0.0, "rgba(255,237,160,0)"], [0.25, "rgba(254,178,76,0.5)"], [1.0, "rgba(189,0,38,0.65)"]]  # the
# weights over the ink: nothing at 0, so the digit shows through where the class token does not look
SUBLAYER_END = re.compile(r"add\d+")  # the residual add that ends a sub-layer: add1, add2


def sublayers(names, layer: int) -> list[list[str]]:
    """The steps of encoder layer `layer` among `names` (a trace's, in the order of the pass), cut after each
    residual add: pre-norm's [ln1, the attention's steps, add1], [ln2, the MLP's steps, add2]."""
    prefix, groups = f"enc.{layer}.", [[]]
    for name in names:
        if name.startswith(prefix):
            groups[-1].append(name)
            if SUBLAYER_END.fullmatch(name.removeprefix(prefix)):
                groups.append([])
    return groups[:-1]


def class_attention(weights, grid: tuple[int, int]) -> np.ndarray:
    """The class token's attention to the patches, laid out as the patches are: each head's row 0 of the weights
    (h, n, n) without its own column, then the heads' mean: (h + 1, rows, cols) of the patch grid `grid`."""
    to_patches = np.asarray(weights)[:, 0, 1:]  # (h, N): the class token's row, the patches' columns
    maps = np.concatenate([to_patches, to_patches.mean(axis=0, keepdims=True)])  # (h + 1, N)
    return maps.reshape(len(maps), *grid)  # (h + 1, rows, cols): patches row by row, as patchify cuts them


def self_attention(weights) -> np.ndarray:
    """What the class token gives itself, per head and the heads' mean: (h + 1,). With its patches' it sums to 1."""
    own = np.asarray(weights)[:, 0, 0]  # (h,)
    return np.append(own, own.mean())


def strongest(maps) -> list[tuple[int, float]]:
    """Per map (rows, cols) of `maps`: the patch (its position among the patches, row by row, from 0) with the largest
    weight, and that weight."""
    flat = np.asarray(maps).reshape(len(maps), -1)  # (panels, N)
    best = flat.argmax(axis=1)  # (panels,)
    return [(int(k), float(row[k])) for k, row in zip(best, flat)]


def attention_over_image(image, maps, titles, patch_names, digits=DIGITS, scale=1.0,
                         per_row=PANELS_PER_ROW) -> Chart:
    """One panel per map (rows, cols) of `maps`: the image (H, W, C: its first channel, in grey) with the map's
    weight over each P x P patch as a colour that lets the ink show where the weight is small, and, when there are
    few patches, the weight written in the patch to PLACES decimals on a pale label. One colour scale for every
    panel, from 0 to the largest weight, so the panels compare; `titles` above them (a line break: <br>); hovering a
    patch names it (`patch_names`, row by row) and its weight to `digits` significant digits. `per_row` panels side
    by side (a projector's slide: all of them)."""
    pixels = np.asarray(image, dtype=float)[..., 0]  # (H, W)
    maps = np.asarray(maps, dtype=float)  # (panels, rows, cols)
    panels, rows, cols = maps.shape
    patch = pixels.shape[0] // rows
    per_row = min(panels, per_row)
    lines = -(-panels // per_row)
    top = float(maps.max()) or 1.0
    data, layout = [], {"height": lines * (PANEL_HEIGHT + TITLE_ROOM) * scale, "margin": MARGIN, "showlegend": False,
                        "dragmode": False, "hovermode": "closest", "annotations": [], "shapes": []}
    for k, (values, title) in enumerate(zip(maps, titles)):
        axis = "" if k == 0 else str(k + 1)
        refs = {"xaxis": f"x{axis}", "yaxis": f"y{axis}"}
        cells = table(values, digits)
        data.append(digit_heatmap(pixels, **refs))
        data.append({"type": "heatmap", "z": values.tolist(), "x0": (patch - 1) / 2, "dx": patch,
                     "y0": (patch - 1) / 2, "dy": patch, "colorscale": HEAT, "zmin": 0, "zmax": top,
                     "showscale": k == 0, "colorbar": COLORBAR, **refs,
                     "hovertemplate": "%{customdata}<extra></extra>",
                     "customdata": [[f"{patch_names[i * cols + j]} · {cells[i][j]}" for j in range(cols)]
                                    for i in range(rows)]})
        column, line = k % per_row, k // per_row
        height = 1 / lines
        across, down = digit_axes(pixels.shape, numbered=False, anchor=f"x{axis}")
        layout[f"xaxis{axis}"] = {**across, "domain": [column / per_row + 0.02, (column + 1) / per_row - 0.02]}
        layout[f"yaxis{axis}"] = {**down, "domain": [1 - (line + 1) * height,
                                                     1 - (line + TITLE_ROOM / (PANEL_HEIGHT + TITLE_ROOM)) * height]}
        font = {"size": LABEL_SIZE * scale}
        layout["annotations"].append({"text": title, "showarrow": False, "xref": f"x{axis} domain",
                                      "yref": f"y{axis} domain", "x": 0.5, "y": 1.0, "yanchor": "bottom",
                                      "font": font})
        if rows * cols <= NUMBERED_PATCHES:
            layout["annotations"] += [{"text": decimals(values[i, j], PLACES), "showarrow": False,
                                       "xref": f"x{axis}", "yref": f"y{axis}", "x": (j + 0.5) * patch - 0.5,
                                       "y": (i + 0.5) * patch - 0.5, "bgcolor": "rgba(255,255,255,0.85)",
                                       "font": {"size": TEXT_SIZE * scale, "color": "#111"}}
                                      for i in range(rows) for j in range(cols)]
        layout["shapes"] += _patch_grid(axis, pixels.shape, patch)
    return Chart(data, layout)


def _patch_grid(axis: str, shape: tuple, patch: int) -> list[dict]:
    """The patches' borders on one panel."""
    height, width = shape
    line = {"color": "#888", "width": 1}
    refs = {"xref": f"x{axis}", "yref": f"y{axis}"}
    across = [{"type": "line", "x0": -0.5, "x1": width - 0.5, "y0": r - 0.5, "y1": r - 0.5, "line": line, **refs}
              for r in range(0, height + 1, patch)]
    down = [{"type": "line", "x0": c - 0.5, "x1": c - 0.5, "y0": -0.5, "y1": height - 0.5, "line": line, **refs}
            for c in range(0, width + 1, patch)]
    return across + down


class Prediction(NamedTuple):
    digit: str  # the class with the largest probability, by its name
    probability: float


def prediction(probs, classes) -> Prediction:
    """The head's answer: the class of the largest probability in head.probs (1, N_c)."""
    row = np.asarray(probs)[0]  # (N_c,)
    best = int(np.argmax(row))
    return Prediction(classes[best], float(row[best]))
