"""The Vision Transformer's part of a session's state (AppState.vit): which digit it reads, the pixels a learner
changed, which weights it runs with, its sizes and the weights a learner edited; and that part's URL form.

Pure Python, no Streamlit. A link such as
    ?vimg=7&vpx=3.4=1;3.5=0.5&vw=random&vseed=2&vcfg=patch:2,d_model:16&vedit=img.E:0.1=1.5
opens test image 7 (from 1) with two pixels inked, the random weights of seed 2 at patch size 2 and D = 16, and one
weight of the patch projection edited. Without vw and vcfg the pages run the trained model the repository ships.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from engine import digits
from engine.config import ConfigError
from engine.values import MAX_SEED
from engine.vit import MAX_PIXEL, ViTConfig

from ui.stores.weights import ID as WEIGHTS_ID

SHIPPED = ""  # weights: the trained model of engine/data/vit-digits.npz
RANDOM = "random"  # weights: engine.vit.initial_params of the seed
SIZES = ("patch", "d_model", "n_heads", "n_layers", "d_ff")  # the sizes a learner may change (vcfg)
APP_LIMITS = {"patch": (1, 8), "d_model": (1, 64), "n_heads": (1, 8), "n_layers": (1, 4), "d_ff": (1, 256)}
MAX_PIXEL_EDITS = 64  # every pixel of the 8 x 8 image
MAX_EDITS = 200
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


# ---- the URL -------------------------------------------------------------------------------------------------------

def encode(state: VisionState) -> dict[str, str]:
    query = {}
    if state.image:
        query["vimg"] = str(state.image + 1)
    if state.pixels:
        query["vpx"] = ";".join(f"{r}.{c}={v!r}" for (r, c), v in state.pixels)
    if state.weights:
        query["vw"] = state.weights
    if state.seed:
        query["vseed"] = str(state.seed)
    if state.sizes:
        query["vcfg"] = ",".join(f"{k}:{v}" for k, v in state.sizes)
    return query  # the edits: ui.core.state.encode, which writes the text model's edits the same way


def decode(query) -> tuple[VisionState, list[str]]:
    """The state a link's v* parts describe but the edits (ui.core.state.decode reads vedit as it reads edit), and a
    note for every part that had to be ignored."""
    notes, state = [], VisionState()
    number = _whole(query.get("vimg", "1"), 1, TEST_IMAGES)
    if number is None:
        notes.append(f"vimg={str(query['vimg'])[:40]!r}")
    pixels, bad = _pixels(query.get("vpx", ""))
    notes += bad
    weights = query.get("vw", SHIPPED)
    if weights not in (SHIPPED, RANDOM) and not WEIGHTS_ID.fullmatch(weights):
        notes.append(f"vw={weights[:40]!r}")
        weights = SHIPPED
    seed = _whole(query.get("vseed", "0"), 0, MAX_SEED)
    if seed is None:
        notes.append(f"vseed={query['vseed'][:40]!r}")
    sizes, bad = _sizes(query.get("vcfg", ""))
    notes += bad
    return state.replace(image=(number or 1) - 1, pixels=pixels, weights=RANDOM if sizes and weights == SHIPPED
                         else weights, seed=seed or 0, sizes=sizes), notes


def _whole(text, low: int, high: int) -> int | None:
    text = str(text)
    if not (text.isascii() and text.isdigit() and len(text) <= 10):
        return None
    return int(text) if low <= int(text) <= high else None


def _pixels(text: str):
    """The link's pixels, and a note for each part left out: unreadable, and those past the first MAX_PIXEL_EDITS
    (quoted together, cut as every note)."""
    pixels, bad = {}, []
    parts = [p for p in text.split(";") if p]
    for part in parts[:MAX_PIXEL_EDITS]:
        try:
            where, value = part.split("=")
            row, col = (_whole(n, 0, ViTConfig().height - 1) for n in where.split("."))
            if row is None or col is None:
                raise ValueError(part)
            pixels[(row, col)] = check_pixel(value)
        except ValueError:
            bad.append(part[:80])
    if parts[MAX_PIXEL_EDITS:]:
        bad.append(";".join(parts[MAX_PIXEL_EDITS:])[:80])
    return tuple(sorted(pixels.items())), bad


def _sizes(text: str):
    sizes, bad = {}, []
    for part in filter(None, text.split(",")):
        field, _, value = part.partition(":")
        number = _whole(value, *APP_LIMITS[field]) if field in SIZES else None
        if number is None:
            bad.append(part[:80])
        else:
            sizes[field] = number
    try:
        ViTConfig(**sizes)
    except ConfigError:  # each size in range, not all together (a patch that does not divide 8): the part noted whole
        return (), bad + [text[:80]]
    default = ViTConfig()
    return tuple(sorted((f, v) for f, v in sizes.items() if getattr(default, f) != v)), bad

