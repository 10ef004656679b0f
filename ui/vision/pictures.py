"""The Vision Transformer pages' pictures, built from arrays and labels only (pure: no Streamlit): how a digit is
drawn (ink, square pixels, rows and columns counted from 1, each pixel's hover), the image with its patch grid, one
patch's flattened row, the patch embedding's product laid out as it is computed, and the position embeddings'
similarity maps (the ViT paper's figure 7). The other ViT pictures draw their digits with digit_heatmap and
digit_axes (ui/vision/vit_charts.py) or digit_bitmap (ui/vision/vit_figures.py)."""
from __future__ import annotations

import numpy as np

from ui.core.figures import COLORBAR, DIVERGING, MARGIN, PLOT_WIDTH, Chart, cell_markers, typed_array
from ui.core.format import fmt

INK = ("#ffffff", "#000000")  # a pixel's colour from 0 (blank: white) to 1 (inked: black), as the digits are drawn
GRID = "#e4572e"  # the patch grid's lines and names
PIXEL_GAPS = "#c8c8c8"  # the thin lines between pixels: a blank pixel is white, as the page is
IMAGE_PX = 420  # the image's side: 8 pixels of ~50 px, crisp
PRODUCT_CELL = 20  # px, a cell of the product's picture (its height; plotly stretches the width to the page)
MAP_PX = 360  # the similarity maps' side
NAMED_CELL = 22  # px: a map's cell at least this large names its patch


def image_chart(image, patch: int, names, chosen: int | None = None, columns=None) -> Chart:
    """The grey image (H, W) with its patch grid over it, each patch named in its top left corner (names: P1 ... PN,
    row by row); the chosen patch outlined, each of its pixels numbered in its bottom right corner with its column
    in the flattened row (columns: the image's (row, column) of each column, engine.vit.patch_pixels)."""
    pixels = np.asarray(image, dtype=float)
    height, width = pixels.shape
    across = width // patch
    data = [digit_heatmap(pixels, gaps=True), _hover_layer(pixels, pixel_hover(pixels), IMAGE_PX / width)]
    lines = [_line(k * patch - 0.5, -0.5, k * patch - 0.5, height - 0.5) for k in range(1, across)]
    lines += [_line(-0.5, k * patch - 0.5, width - 0.5, k * patch - 0.5) for k in range(1, height // patch)]
    notes = [{"x": (i % across) * patch - 0.45, "y": (i // across) * patch - 0.45, "text": f"<b>{name}</b>",
              "xanchor": "left", "yanchor": "top", "showarrow": False, "font": {"color": GRID, "size": 15},
              "bgcolor": "rgba(255,255,255,0.8)"} for i, name in enumerate(names)]
    if chosen is not None:
        row, col = divmod(chosen, across)
        lines.append({"type": "rect", "x0": col * patch - 0.5, "x1": (col + 1) * patch - 0.5, "y0": row * patch - 0.5,
                      "y1": (row + 1) * patch - 0.5, "line": {"color": GRID, "width": 5}})
        notes += [{"x": c + 0.45, "y": r + 0.45, "text": str(j + 1), "showarrow": False, "xanchor": "right",
                   "yanchor": "bottom", "font": {"size": 12, "color": "#ffffff" if pixels[r, c] > 0.5 else "#333333"}}
                  for j, (r, c, _) in enumerate(columns if columns is not None and patch > 1 else ())]
    across_axis, down_axis = digit_axes(pixels.shape)
    layout = {"height": IMAGE_PX, "width": IMAGE_PX, "margin": MARGIN, "dragmode": False, "hovermode": "closest",
              "plot_bgcolor": PIXEL_GAPS, "xaxis": across_axis, "yaxis": down_axis, "shapes": lines,
              "annotations": notes}
    return Chart(data, layout)


def patch_row_chart(values, columns, name: str, row_label: str) -> Chart:
    """One patch's flattened row x_p^i (P²C numbers) in the image's greys, each column labelled with its number and
    the pixel it is: "5" over "(1, 4)"."""
    row = np.asarray(values, dtype=float)[None, :]
    ticks = [f"{j + 1}<br>({r + 1}, {c + 1})" for j, (r, c, _) in enumerate(columns)]
    data = [digit_heatmap(row, gaps=True),
            _hover_layer(row, lambda _, j: f"{name}[{j + 1}] = x{ticks[j].split('<br>')[1]}: {fmt(row[0, j])}")]
    step = max(1, len(ticks) // 24)
    layout = {"height": 130, "margin": {**MARGIN, "t": 50}, "dragmode": False, "hovermode": "closest",
              "plot_bgcolor": PIXEL_GAPS,
              "xaxis": {"side": "top", "tickvals": list(range(0, len(ticks), step)), "ticktext": ticks[::step],
                        "showgrid": False, "zeroline": False, "range": [-0.5, len(ticks) - 0.5]},
              "yaxis": {"tickvals": [0], "ticktext": [row_label], "showgrid": False, "zeroline": False}}
    return Chart(data, layout)


def product_chart(x, weight, bias, result, names, chosen: int | None = None) -> Chart:
    """x E + b = result laid out as it is computed (Falk's scheme): E above the result, x to the result's left, so
    row i of x and column j of E meet at the result's cell (i, j); the bias between E and the result. names: the
    four matrices' names and the rows' labels (x, E, b, result, rows), written beside them. Each panel has its own
    colour scale, centred at 0; the chosen row of x and of the result is outlined."""
    x, weight, result = (np.atleast_2d(np.asarray(m, dtype=float)) for m in (x, weight, result))
    bias = np.asarray(bias, dtype=float)[None, :]
    n, k, d = x.shape[0], x.shape[1], weight.shape[1]
    columns, rows = k + 1 + d, k + 1 + 1 + 1 + n  # a gap column, and gaps around the bias
    left, right = [0, k / columns], [(k + 1) / columns, 1]
    top, middle, bottom = [1 - k / rows, 1], [1 - (k + 2) / rows, 1 - (k + 1) / rows], [0, n / rows]
    panels = [(x, left, bottom, names[4]), (weight, right, top, None), (bias, right, middle, None),
              (result, right, bottom, names[4])]
    where = [(0.5, 1.0, "center", "bottom"), (-0.01, 0.5, "right", "middle"), (-0.01, 0.5, "right", "middle"),
             (0.5, 0.0, "center", "top")]  # each name: above x, left of E and b, under the result
    data, layout = [], {"height": PRODUCT_CELL * rows + 70, "margin": {**MARGIN, "l": 40, "b": 30},
                        "dragmode": False, "hovermode": "closest", "annotations": [], "shapes": []}
    for p, ((matrix, across, down, labels), name, (nx, ny, xanchor, yanchor)) in enumerate(
            zip(panels, names, where), start=1):
        axis = "" if p == 1 else str(p)
        limit = float(np.max(np.abs(matrix))) or 1.0
        data.append({"type": "heatmap", "z": typed_array(matrix), "colorscale": DIVERGING,
                     "zmin": -limit, "zmax": limit, "showscale": False, "hoverinfo": "skip",
                     "xaxis": f"x{axis}", "yaxis": f"y{axis}"})
        data.append({**_hover_layer(matrix, lambda r, c, m=matrix, nm=name, lb=labels:
                                    f"{nm}[{lb[r] if lb else r + 1}, {c + 1}] = {fmt(m[r, c])}",
                                    min(PLOT_WIDTH / columns, PRODUCT_CELL)),
                     "xaxis": f"x{axis}", "yaxis": f"y{axis}"})
        layout[f"xaxis{axis}"] = {"domain": across, "showticklabels": False, "ticks": "", "showgrid": False,
                                  "zeroline": False,
                                  "range": [-0.5, matrix.shape[1] - 0.5], "anchor": f"y{axis}"}
        layout[f"yaxis{axis}"] = {"domain": down, "showgrid": False, "zeroline": False, "autorange": "reversed",
                                  "anchor": f"x{axis}", "tickvals": list(range(len(labels))) if p == 1 else [],
                                  "ticktext": list(labels) if p == 1 else []}  # x's row names are the result's
        size = f"{matrix.shape[0]} × {matrix.shape[1]}"
        layout["annotations"].append({"text": f"<b>{name}</b> ({size})", "xref": f"x{axis} domain",
                                      "yref": f"y{axis} domain", "x": nx, "y": ny, "xanchor": xanchor,
                                      "yanchor": yanchor, "showarrow": False, "font": {"size": 13}})
        if chosen is not None and labels:
            layout["shapes"].append({"type": "rect", "xref": f"x{axis}", "yref": f"y{axis}", "x0": -0.5,
                                     "x1": matrix.shape[1] - 0.5, "y0": chosen - 0.5, "y1": chosen + 0.5,
                                     "line": {"color": GRID, "width": 3}})
    return Chart(data, layout)


def digit_heatmap(pixels, gaps: bool = False, **axes) -> dict:
    """An image's pixels (H, W), 0 blank to 1 inked, as a plotly heatmap in INK, pixel (row, col) at (col, row) from 0;
    gaps: a pixel's width apart, the plot's background between them. It takes no hover: pixel_hover's layer names the
    pixels, or a layer drawn over it. axes: its xaxis and yaxis on a chart of several panels."""
    return {"type": "heatmap", "z": typed_array(np.asarray(pixels, dtype=float)),
            "colorscale": [[0.0, INK[0]], [1.0, INK[1]]], "zmin": 0, "zmax": 1, "showscale": False,
            "hoverinfo": "skip", **({"xgap": 1, "ygap": 1} if gaps else {}), **axes}


def digit_axes(shape: tuple[int, int], numbered: bool = True, anchor: str = "x") -> tuple[dict, dict]:
    """The x and y axes of a digit (H, W) drawn by digit_heatmap: square pixels (y scaled to `anchor`, the x axis's
    name), row 1 at the top, and the rows and columns numbered from 1 (the columns above) or not numbered."""
    height, width = shape
    plain = {"showgrid": False, "zeroline": False, "constrain": "domain"}
    if numbered:
        across = {"side": "top", "tickvals": list(range(width)), "ticktext": [str(c + 1) for c in range(width)]}
        down = {"tickvals": list(range(height)), "ticktext": [str(r + 1) for r in range(height)]}
    else:
        across = down = {"showticklabels": False, "ticks": ""}
    return ({**plain, **across, "range": [-0.5, width - 0.5]},
            {**plain, **down, "range": [height - 0.5, -0.5], "scaleanchor": anchor})


def pixel_hover(pixels):
    """A pixel's hover text, (row, column) counted from 1 and its value: text(row, col) for _hover_layer."""
    return lambda r, c: f"({r + 1}, {c + 1}): {fmt(pixels[r, c])}"


def digit_bitmap(image, pixel: int) -> np.ndarray:
    """An image (H, W, 1) of 0 (blank) to 1 (ink) as grey bytes (H·pixel, W·pixel) in INK's greys, each pixel a block
    of pixel × pixel (a browser enlarging 8 × 8 pixels would blur them): a picture small enough for an <img>."""
    blank, ink = (int(colour[1:3], 16) for colour in INK)  # the greys' one channel
    inked = np.clip(np.asarray(image, dtype=float)[..., 0], 0, 1)  # (H, W)
    grey = blank + (ink - blank) * inked
    return np.round(np.kron(grey, np.ones((pixel, pixel)))).astype(np.uint8)  # (H·pixel, W·pixel)


def similarity_maps_chart(maps, names) -> Chart:
    """The ViT paper's figure 7: for each patch (at its place in the grid) a small map of its position embedding's
    cosine with every patch's (at theirs), −1 blue to 1 red, the maps a blank cell apart. maps: (R, C, R, C)
    (engine.vit.similarity_maps); names: the patches', row by row."""
    maps = np.asarray(maps, dtype=float)
    grid_rows, grid_cols = maps.shape[:2]
    size = (grid_rows * (grid_rows + 1) - 1, grid_cols * (grid_cols + 1) - 1)
    picture = np.full(size, np.nan)
    texts = np.full(size, "", dtype=object)
    for r in range(grid_rows):
        for c in range(grid_cols):
            top, left = r * (grid_rows + 1), c * (grid_cols + 1)
            picture[top:top + grid_rows, left:left + grid_cols] = maps[r, c]
            for i in range(grid_rows):
                for j in range(grid_cols):
                    texts[top + i, left + j] = (f"{names[r * grid_cols + c]} · {names[i * grid_cols + j]}: "
                                                f"{fmt(maps[r, c, i, j])}")
    cell = min(MAP_PX / size[0], MAP_PX / size[1])
    data = [{"type": "heatmap", "z": typed_array(picture), "colorscale": DIVERGING, "zmin": -1, "zmax": 1, "zmid": 0,
             "hoverinfo": "skip", "colorbar": COLORBAR},
            {**cell_markers(cell),
             "x": typed_array(np.nonzero(texts != "")[1]), "y": typed_array(np.nonzero(texts != "")[0]),
             "text": list(texts[texts != ""]), "hovertemplate": "%{text}<extra></extra>"}]
    notes = [{"x": c * (grid_cols + 1) + c, "y": r * (grid_rows + 1) + r, "text": names[r * grid_cols + c],
              "showarrow": False, "font": {"color": "#ffffff", "size": 12}}
             for r in range(grid_rows) for c in range(grid_cols)] if cell >= NAMED_CELL else []
    hidden = {"showgrid": False, "zeroline": False, "showticklabels": False}
    layout = {"height": MAP_PX + 20, "width": MAP_PX + 100, "margin": MARGIN, "dragmode": False,
              "hovermode": "closest", "annotations": notes,
              "xaxis": {**hidden, "range": [-0.5, size[1] - 0.5], "constrain": "domain"},
              "yaxis": {**hidden, "autorange": "reversed", "scaleanchor": "x"}}
    return Chart(data, layout)


def _hover_layer(values, text, cell_px=None) -> dict:
    """Invisible markers on the cells' centres carrying each cell's hover text, text(row, column); cell_px: a cell's
    width, if not a step heatmap's."""
    r, c = np.meshgrid(range(values.shape[0]), range(values.shape[1]), indexing="ij")
    return {**cell_markers(cell_px or PLOT_WIDTH / values.shape[1]),
            "x": typed_array(c.ravel()), "y": typed_array(r.ravel()), "hovertemplate": "%{text}<extra></extra>",
            "text": [text(i, j) for i, j in zip(r.ravel(), c.ravel())]}


def _line(x0, y0, x1, y1) -> dict:
    return {"type": "line", "x0": x0, "y0": y0, "x1": x1, "y1": y1, "line": {"color": GRID, "width": 3}}
