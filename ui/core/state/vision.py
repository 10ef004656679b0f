"""The Vision Transformer's part of a session's state (AppState.vit): which digit it reads, the pixels a learner
changed, which weights it runs with, its sizes and the weights a learner edited. Its link parts (vimg, vpx, vw, vseed,
vcfg, vedit) are rows of the link's table (ui/core/state/link.py). Pure Python, no Streamlit."""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from engine import digits
from engine.vit import MAX_PIXEL, ViTConfig

SHIPPED = ""  # weights: the trained model of engine/data/vit-digits.npz
RANDOM = "random"  # weights: engine.vit.initial_params of the seed
SIZES = ("patch", "d_model", "n_heads", "n_layers", "d_ff")  # the sizes a learner may change (vcfg)
APP_LIMITS = {"patch": (1, 8), "d_model": (1, 64), "n_heads": (1, 8), "n_layers": (1, 4), "d_ff": (1, 256)}
MAX_PIXEL_EDITS = 64  # every pixel of the 8 x 8 image
TEST_IMAGES = 360  # the test split's images (engine/digits.py)


class Edited:
    """A state with typed weights: `edits`, ((param, (i, j, ...), value), ...) sorted, and `replace`."""

    def with_edit(self, param: str, index: tuple, value: float):
        edits = {(p, i): v for p, i, v in self.edits}
        edits[(param, tuple(index))] = float(value)
        return self.replace(edits=tuple(sorted((p, i, v) for (p, i), v in edits.items())))

    def without_edits(self, param: str | None = None):
        """Without the edits of one parameter, or (None) of every one."""
        return self.replace(edits=tuple(e for e in self.edits if param is not None and e[0] != param))


@dataclass(frozen=True)
class VisionState(Edited):
    image: int = 0  # the test split's image, from 0
    pixels: tuple = ()  # (((row, col), value), ...), sorted: pixels set by the learner, 0 (blank) to 1 (inked)
    weights: str = SHIPPED  # SHIPPED, RANDOM, or the id of weights trained in this server (ui.stores.weights)
    seed: int = 0  # the random weights' seed
    sizes: tuple = ()  # ((field, value), ...), sorted: ViTConfig sizes that differ from the shipped model's
    edits: tuple = ()  # ((param, (i, j, ...), value), ...), sorted: weights typed by the learner

    def replace(self, **changes) -> "VisionState":
        return dataclasses.replace(self, **changes)

    def settings(self) -> ViTConfig:
        return ViTConfig(**dict(self.sizes))

    @property
    def shipped(self) -> bool:
        """Whether the pages run the trained model the repository ships (its sizes are the defaults)."""
        return self.weights == SHIPPED and not self.sizes

    def with_pixel(self, row: int, col: int, value: float) -> "VisionState":
        pixels = dict(self.pixels)
        pixels[(row, col)] = check_pixel(value)
        return self.replace(pixels=tuple(sorted(pixels.items())))

    def with_sizes(self, **changes) -> "VisionState":
        """Other sizes: the shipped model does not have them, so the weights become the seed's random ones."""
        default = ViTConfig()
        chosen = {**dict(self.sizes), **changes}
        sizes = tuple(sorted((f, v) for f, v in chosen.items() if getattr(default, f) != v))
        ViTConfig(**dict(sizes))  # a ConfigError names what does not fit
        return self.replace(sizes=sizes, edits=(), weights=RANDOM if sizes else self.weights)


def check_pixel(value) -> float:
    """A typed or drawn pixel, or ValueError: finite and within ±MAX_PIXEL (engine.vit.check_images)."""
    return finite_within(value, MAX_PIXEL)


def finite_within(value, bound: float) -> float:
    """A typed number (a weight, a pixel) as a float, or ValueError: finite and within ±bound."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(value) from None
    if not math.isfinite(number) or abs(number) > bound:
        raise ValueError(value)
    return number


def image(state: VisionState):
    """The image the pages read: the test split's, with the learner's pixels written in: (8, 8, 1)."""
    picture = digits.split("test").images[state.image].copy()
    for (row, col), value in state.pixels:
        picture[row, col, 0] = value
    return picture


def label(state: VisionState) -> int | None:
    """The test image's digit, or None once a learner changed its pixels (then it is whatever they drew)."""
    return None if state.pixels else int(digits.split("test").labels[state.image])
