"""What a learner's drawing sends (the pixel pad's strokes) read into the image's pixels, or refused whole: pure, no
Streamlit, so every forged payload is tried without a browser."""
from __future__ import annotations

from ui.core.state.vision import MAX_PIXEL_EDITS, VisionState, check_pixel


def read_strokes(payload, height: int, width: int) -> list[tuple[int, int, float]]:
    """The pad's [[row, col, value], ...] (from 0; value 0 blank to 1 inked) as (row, col, value), or ValueError:
    a list of at most every pixel once, each place a whole number inside the image, each value a finite number
    within ±engine.vit.MAX_PIXEL (check_pixel). Booleans and text are not numbers here: the pad
    sends JSON numbers."""
    if not isinstance(payload, list) or not 0 < len(payload) <= max(MAX_PIXEL_EDITS, height * width):
        raise ValueError("not a list of pixels")
    read = []
    for stroke in payload:
        if not isinstance(stroke, list) or len(stroke) != 3:
            raise ValueError(stroke)
        row, col, value = stroke
        if not all(isinstance(n, int) and not isinstance(n, bool) for n in (row, col)) \
                or not isinstance(value, (int, float)) or isinstance(value, bool) \
                or not (0 <= row < height and 0 <= col < width):
            raise ValueError(stroke)
        read.append((row, col, check_pixel(value)))
    return read


def drawn(state: VisionState, strokes) -> VisionState:
    """The state with the strokes' pixels set (a later stroke of the same pixel wins)."""
    for row, col, value in strokes:
        state = state.with_pixel(row, col, value)
    return state


def cleared(state: VisionState, height: int, width: int) -> VisionState:
    """Every pixel blank: a page to draw a digit on."""
    return drawn(state, [(row, col, 0.0) for row in range(height) for col in range(width)])
