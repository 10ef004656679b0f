"""What the app shows comfortably: the sizes, sentences, weights and edits a state may hold, the check of a state
against them, and a link's state fitted within them part by part. Pure Python, no Streamlit."""
from __future__ import annotations

import functools

import engine
from engine.config import DEPTHS
from engine.sizes import parameter_count
from engine.tokens import split

from ui.core.state.app import DEFAULT_SOURCE, DEFAULT_TARGET, AppState
from ui.core.state.vision import finite_within

APP_LIMITS = {"d_model": 512, "n_heads": 16, "d_k": 512, "d_v": 512, "d_ff": 2048, "n_layers": 12,
              "n_enc_layers": 12, "n_dec_layers": 12}  # from 1
FLOAT_RANGES = {"attn_divisor": (0.001, 1e6), "eps": (0.0, 1.0)}  # what the option widgets accept
MAX_TOKENS = 64
MAX_CHARS = 2000  # a sentence's characters, in the text inputs and in a link: room for MAX_TOKENS long words
MAX_WEIGHT = 1e6
MAX_EDITS = 200
MAX_PARAMS = 60_000_000  # the paper's sizes with N = 8: 59 million weights, 470 MB (N = 12 is more: refused)


class LimitError(ValueError):
    """A setting beyond what the app shows comfortably; args: (message key, values for the message)."""


def check_limits(state: AppState) -> None:
    for field, value in state.overrides:
        high = APP_LIMITS.get(field)
        if high is not None and isinstance(value, int) and value > high:
            raise LimitError("msg.too_big", {"field": field, "high": high, "value": value})
    _check_size(state)
    for side in ("src", "tgt"):
        _check_text(state, side)


def fitted(state: AppState) -> tuple[AppState, list]:
    """A link's state within the app's limits, keeping what it can, and a LimitError for each part left out: a
    setting that makes the model too big keeps the preset's value (the settings taken in turn by name, each kept
    while the model still fits); a sentence too long, or an empty source, the app's default sentence."""
    kept, notes = state.replace(overrides=()), []
    for field, value in state.overrides:
        candidate = kept.with_settings(**{field: value})
        try:
            _check_size(candidate)
        except LimitError as error:
            notes.append(LimitError("msg.too_big_with", {**error.args[1], "field": field, "value": setting_text(value),
                                                         "kept": _shown_setting(kept.config(), field)}))
        else:
            kept = candidate
    for side, default in (("src", DEFAULT_SOURCE), ("tgt", DEFAULT_TARGET)):
        try:
            _check_text(kept, side)
        except LimitError as error:
            notes.append(error)
            kept = kept.replace(**{side: default})
    return kept, notes


def check_range(field, value):
    """A Config field's value within the app's own bounds, which its widgets enforce too, or ValueError."""
    if field in APP_LIMITS and not 1 <= value <= APP_LIMITS[field]:
        raise ValueError(field)
    low, high = FLOAT_RANGES.get(field, (None, None))
    if low is not None and isinstance(value, float) and not low <= value <= high:
        raise ValueError(field)


def check_weight(value) -> float:
    """A typed weight, or ValueError: finite and within ±MAX_WEIGHT."""
    return finite_within(value, MAX_WEIGHT)


def setting_text(value) -> str:
    """A Config value as a link and a note write it: true, 0.5, sqrt_dk."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)


def _shown_setting(config: engine.Config, field: str) -> str:
    """A setting's value as the sidebar shows it: a stack's depth is N where the stack has no depth of its own."""
    stack = {own: stack for stack, own in DEPTHS.items()}.get(field)
    return setting_text(config.depth(stack) if stack else getattr(config, field))


def _check_text(state: AppState, side: str) -> None:
    text = state.src if side == "src" else state.tgt
    n = len(split(text)) + (side == "tgt")  # a target prefix counts its start token
    if n > MAX_TOKENS:
        raise LimitError("msg.too_long", {"side": side, "n": n, "high": MAX_TOKENS})
    if side == "src" and not n:
        raise LimitError("msg.empty", {})


def _check_size(state: AppState) -> None:
    """The weights' count: a link or the options may combine caps (h = 16, d_k = 512, N = 8) into gigabytes."""
    try:
        config = state.config()
    except ValueError:
        return  # not a model at all: the engine says why when the model is built
    n = _weight_count(config)
    if n > MAX_PARAMS:
        raise LimitError("msg.too_many_weights", {"high": f"{MAX_PARAMS:,}", "n": f"{n:,}"})


@functools.lru_cache(maxsize=64)  # every rerun checks its state's size
def _weight_count(config: engine.Config) -> int:
    return parameter_count(config, 0)  # the embeddings are left out
