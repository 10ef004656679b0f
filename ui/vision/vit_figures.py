"""The ViT training page's pictures, from arrays and labels only (pure: no Streamlit): a test digit as a small
picture, and the confusion matrix as a heatmap with its counts."""
from __future__ import annotations

import numpy as np

from ui.core.figures import COLORBAR, MARGIN, SEQUENTIAL, TEXT_SIZE, Chart
from ui.vision.pictures import digit_bitmap

PIXEL = 7  # screen pixels per image pixel: an 8 × 8 digit is 56 px wide, each pixel a sharp square
CONFUSION_CELL = 40  # px, a cell of the confusion matrix: room for a count of three digits
CONFUSION_FRAME = (70, 100)  # px the matrix's axes take beside and above its cells (labels, titles, colour bar)


def picture(image) -> np.ndarray:
    """A test digit (H, W, 1) as grey bytes (H·PIXEL, W·PIXEL), drawn as every ViT picture draws a digit."""
    return digit_bitmap(image, PIXEL)


def confusion_chart(counts, classes, true_title: str, predicted_title: str, scale: float = 1.0) -> Chart:
    """counts[true, predicted] (N_c, N_c): the true class down the side, the predicted one across the top, each cell
    its count (an empty cell for none, so the mistakes stand out off the diagonal)."""
    counts = np.asarray(counts)
    n = len(classes)
    text = [[str(c) if c else "" for c in row] for row in counts.tolist()]
    data = [{"type": "heatmap", "z": counts.tolist(), "x": list(classes), "y": list(classes), "text": text,
             "texttemplate": "%{text}", "textfont": {"size": TEXT_SIZE * scale}, "colorscale": SEQUENTIAL,
             "zmin": 0, "xgap": 1, "ygap": 1, "colorbar": COLORBAR,
             "hovertemplate": f"{true_title} %{{y}}<br>{predicted_title} %{{x}}<br>%{{z}}<extra></extra>"}]
    side = round(CONFUSION_CELL * scale) * n
    layout = {"width": side + CONFUSION_FRAME[0] + 80, "height": side + CONFUSION_FRAME[1], "margin": MARGIN,
              "dragmode": False,
              "xaxis": {"title": {"text": predicted_title}, "side": "top", "type": "category", "fixedrange": True},
              "yaxis": {"title": {"text": true_title}, "autorange": "reversed", "type": "category",
                        "fixedrange": True}}
    return Chart(data, layout)
