"""The codecs of the link's parts (link.py holds the table that names them): each writes a value of the state as the
text of a link's part (`encode`) and reads it back (`decode(text, state)` -> (value, notes), given the state read so
far). A part refused whole raises ValueError, and the link notes it as `key='text'`; a part made of settings or cells
keeps the good ones and notes each bad one as it is (80 characters), or why a number was refused. Pure Python."""
from __future__ import annotations

import re
from typing import Protocol

import engine
from engine.config import ConfigError, parse_field
from engine.vit import ViTConfig

from ui.core import generation
from ui.core.i18n import literal
from ui.core.state.limits import MAX_CHARS, MAX_EDITS, LimitError, check_range, check_weight, setting_text
from ui.core.state.vision import APP_LIMITS as VISION_LIMITS, MAX_PIXEL_EDITS, SIZES, check_pixel
from ui.stores.models import is_name as is_model_name
from ui.stores.weights import ID as WEIGHTS_ID

PARAM_NAME = re.compile(r"[A-Za-z0-9_.]{1,60}")  # a weight's name as the engine writes it: enc.0.attn.W_Q
NOTED = 80  # the characters of a bad part a note quotes


class Codec(Protocol):
    def encode(self, value) -> str: ...

    def decode(self, text: str, state) -> tuple[object, list]: ...


def whole(text, low: int, high: int) -> int | None:
    """An ASCII whole number of at most 10 digits within [low, high], or None."""
    text = str(text)
    if not (text.isascii() and text.isdigit() and len(text) <= 10):
        return None
    return int(text) if low <= int(text) <= high else None


def _named_parts(text: str, read) -> tuple[dict, list]:
    """The `name:value` parts of a setting, e.g. `p:0.8,seed:7`, each read by read(name, text) (the last of a name
    wins), and the parts it did not read (None), noted as they are."""
    values, bad = {}, []
    for part in filter(None, text.split(",")):
        name, _, raw = part.partition(":")
        value = read(name, raw)
        if value is None:
            bad.append(part[:NOTED])
        else:
            values[name] = value
    return values, bad


class Choice:
    """One of a few words, each naming a value: the digits, presenter mode on ("1") or off."""

    def __init__(self, words: dict):
        self.words, self.written = words, {value: word for word, value in words.items()}

    def encode(self, value) -> str:
        return self.written[value]

    def decode(self, text: str, state):
        if text not in self.words:
            raise ValueError(text)
        return self.words[text], []


class OneOf:
    """A name of one of a collection's members, written as it is: a preset, a language. The collection is read at
    every decode, so a member added later (a language's catalog loaded in a test) counts."""

    def __init__(self, names):
        self.names = names

    def encode(self, value) -> str:
        return value

    def decode(self, text: str, state):
        if text not in self.names:
            raise ValueError(text)
        return text, []


class Whole:
    """A whole number within [low, high] as the page numbers it: from `first` (an image, from 1, is 0 in the state)."""

    def __init__(self, low: int, high: int, first: int = 0):
        self.low, self.high, self.first = low, high, first

    def encode(self, value: int) -> str:
        return str(value + self.first)

    def decode(self, text: str, state):
        number = whole(text, self.low, self.high)
        if number is None:
            raise ValueError(text)
        return number - self.first, []


class Sentence:
    """A sentence (the source or the target, `side`): its first MAX_CHARS characters, noted when it was longer."""

    def __init__(self, side: str):
        self.side = side

    def encode(self, text: str) -> str:
        return text

    def decode(self, text: str, state):
        cut = [LimitError("msg.text_cut", {"side": self.side, "n": len(text), "high": MAX_CHARS})]
        return text[:MAX_CHARS], cut if len(text) > MAX_CHARS else []


class StoredWeights:
    """The id of weights the server holds (ui.stores.weights), or one of `names`: the preset's (""), random ones."""

    def __init__(self, *names: str):
        self.names = names

    def encode(self, value: str) -> str:
        return value

    def decode(self, text: str, state):
        if text not in self.names and not WEIGHTS_ID.fullmatch(text):
            raise ValueError(text)
        return text, []


class ModelName:
    """A real translator's name (ui.stores.models): a folder of the server's models directory or a Hub id; whether
    it loads is the sidebar's to find (start_from_link), as a stored weights' id."""

    def encode(self, value: str) -> str:
        return value

    def decode(self, text: str, state):
        if not is_model_name(text):
            raise ValueError(text)
        return text, []


class ConfigSettings:
    """The Config fields that differ from the state's preset, e.g. `attn_divisor:sqrt_dk,d_model:64`; each part
    valid on its own (the engine's checks) and within the app's bounds, else noted."""

    def encode(self, overrides: tuple) -> str:
        return ",".join(f"{k}:{setting_text(v)}" for k, v in overrides)

    def decode(self, text: str, state):
        base, overrides, bad = engine.PRESETS[state.preset], {}, []
        for part in filter(None, text.split(",")):
            field, _, value = part.partition(":")
            try:
                parsed = parse_field(field, value)
                base.replace(**{field: parsed})  # validates the value on its own
                check_range(field, parsed)
            except (ValueError, TypeError):
                bad.append(part[:NOTED])
                continue
            if getattr(base, field) != parsed:
                overrides[field] = parsed
        return tuple(sorted(overrides.items())), bad


class GenerationSettings:
    """The generation settings that differ from the defaults (ui/core/generation.py), e.g.
    `strategy:top_p,p:0.8,seed:7`: a strategy or model it names, numbers within their ranges, else noted. A setting
    is kept even if it equals the toy's default: the defaults are a loaded translator's when the link names one
    (model=, read after gen=), and the page drops what equals them (ui/core/generation.changed)."""

    def encode(self, pairs: tuple) -> str:
        return ",".join(f"{k}:{v}" for k, v in pairs)

    def decode(self, text: str, state):
        values, bad = _named_parts(text, self._parse)
        return tuple(sorted(values.items())), bad

    @staticmethod
    def _parse(name: str, raw: str):
        if name in ("model", "strategy"):
            return raw if raw in (generation.MODELS if name == "model" else generation.STRATEGIES) else None
        if name not in generation.RANGES:
            return None
        kind = type(generation.DEFAULTS[name])
        try:
            value = kind(raw) if kind is float else int(raw) if raw.isascii() and raw.isdigit() else None
        except ValueError:
            return None
        low, high = generation.RANGES[name]
        return value if value is not None and low <= value <= high else None  # NaN fails; isfinite(10**400) raises


class Edits:
    """Typed weights, e.g. `enc.0.attn.W_Q:0.1.2=1.5;...` (at most MAX_EDITS): an unreadable part is noted as it is, a
    weight check_weight refuses is noted with why, as the editor says it."""

    def encode(self, edits: tuple) -> str:
        return ";".join(f"{p}:{'.'.join(map(str, i))}={v!r}" for p, i, v in edits)

    def decode(self, text: str, state):
        edits, bad = {}, []
        for part in [p for p in text.split(";") if p][:MAX_EDITS]:
            try:
                target, value = part.rsplit("=", 1)
                param, index = target.rsplit(":", 1)
                index = tuple(int(i) for i in index.split("."))
                if not PARAM_NAME.fullmatch(param) or not value:
                    raise ValueError(part)
            except ValueError:
                bad.append(part[:NOTED])
                continue
            try:
                edits[(param, index)] = check_weight(value)
            except ValueError:
                bad.append(LimitError("msg.edit_bad", {"param": param, "index": ",".join(map(str, index))[:40],
                                                       "value": literal(value[:NOTED])}))
        return tuple(sorted((p, i, v) for (p, i), v in edits.items())), bad


class Pixels:
    """The pixels a learner set, e.g. `3.4=1;3.5=0.5` (row.column=value, at most MAX_PIXEL_EDITS)."""

    def encode(self, pixels: tuple) -> str:
        return ";".join(f"{r}.{c}={v!r}" for (r, c), v in pixels)

    def decode(self, text: str, state):
        """The link's pixels, and a note for each part left out: unreadable, and those past the first
        MAX_PIXEL_EDITS (quoted together, cut as every note)."""
        pixels, bad = {}, []
        parts = [p for p in text.split(";") if p]
        for part in parts[:MAX_PIXEL_EDITS]:
            try:
                where, value = part.split("=")
                row, col = (whole(n, 0, ViTConfig().height - 1) for n in where.split("."))
                if row is None or col is None:
                    raise ValueError(part)
                pixels[(row, col)] = check_pixel(value)
            except ValueError:
                bad.append(part[:NOTED])
        if parts[MAX_PIXEL_EDITS:]:
            bad.append(";".join(parts[MAX_PIXEL_EDITS:])[:NOTED])
        return tuple(sorted(pixels.items())), bad


class VisionSizes:
    """The Vision Transformer's sizes that differ from the shipped model's, e.g. `patch:2,d_model:16`: each within the
    app's bounds, and all together a model (else the whole part is noted)."""

    def encode(self, sizes: tuple) -> str:
        return ",".join(f"{k}:{v}" for k, v in sizes)

    def decode(self, text: str, state):
        sizes, bad = _named_parts(text, lambda field, value: whole(value, *VISION_LIMITS[field]) if field in SIZES
                                  else None)
        try:
            ViTConfig(**sizes)
        # each size in range, not all together (a patch that does not divide 8): the part noted whole
        except ConfigError:
            return (), bad + [text[:NOTED]]
        default = ViTConfig()
        return tuple(sorted((f, v) for f, v in sizes.items() if getattr(default, f) != v)), bad
