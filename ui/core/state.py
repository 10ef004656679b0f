"""The whole state of a session (preset, options, text, edited cells), its URL form, and the model it builds.

Pure Python: no Streamlit here, so it is tested directly. The URL is readable on purpose, e.g.
    ?preset=hello-world&src=Hello+World&cfg=attn_divisor:sqrt_dk&edit=enc.0.attn.W_Q:0.1.2=1.5
"""
from __future__ import annotations

import dataclasses
import functools
import math
import re
from dataclasses import dataclass
from typing import NamedTuple

import engine
from engine.config import DEPTHS, parse_field
from engine.exercises import MAX_PROGRESS_CHARS
from engine.presets import configure
from engine.sizes import parameter_count
from engine.tokens import split
from engine.values import MAX_SEED

from ui.core import generation, vision_state
from ui.core.format import DIGITS, DIGITS_RANGE
from ui.core.i18n import LANGUAGES, literal
from ui.core.vision_state import Edited, VisionState, finite_within
from ui.stores.weights import ID as WEIGHTS_ID

APP_LIMITS = {"d_model": 512, "n_heads": 16, "d_k": 512, "d_v": 512, "d_ff": 2048, "n_layers": 12,
              "n_enc_layers": 12, "n_dec_layers": 12}  # from 1
FLOAT_RANGES = {"attn_divisor": (0.001, 1e6), "eps": (0.0, 1.0)}  # what the option widgets accept
MAX_TOKENS = 64
MAX_CHARS = 2000  # a sentence's characters, in the text inputs and in a link: room for MAX_TOKENS long words
MAX_WEIGHT = 1e6
SLIDER_STEPS = 200  # a weight's slider moves in about this many steps
MAX_EDITS = 200
MAX_PARAMS = 60_000_000  # the paper's sizes with N = 8: 59 million weights, 470 MB (N = 12 is more: refused)
DEFAULT_SOURCE = "Hello World"
DEFAULT_TARGET = "Hola Mundo"  # the post's translation: three decoder positions (SOS hola mundo) show the mask


class ModelKey(NamedTuple):
    """Everything that decides the numbers (the language does not): the key of the app's caches of engine runs."""
    preset: str
    seed: int
    src: str
    tgt: str
    overrides: tuple
    edits: tuple
    weights: str


# Streamlit's caches hash a model key by its repr, one string (exact for its strings, numbers and tuples): their
# own hasher walks it item by item, 0.6 ms a rerun with 35 edits and 3.4 ms with 200 (MAX_EDITS).
CACHE_HASH = {ModelKey: repr}


@dataclass(frozen=True)
class AppState(Edited):
    preset: str = "hello-world"
    seed: int = 0
    src: str = DEFAULT_SOURCE
    tgt: str = DEFAULT_TARGET  # "" is the post's own decoder step: SOS alone
    overrides: tuple = ()  # ((field, value), ...), sorted: Config fields that differ from the preset
    edits: tuple = ()  # ((param, (i, j, ...), value), ...), sorted: weights typed by the user
    lang: str = "en"
    lang_chosen: bool = False  # the reader chose the language (or a link did): the link says it, else the browser
    gen: tuple = ()  # ((setting, value), ...), sorted: generation settings that differ from the defaults
    weights: str = ""  # the id of trained or uploaded weights the server holds (ui.stores.weights), or "": the preset's
    digits: int = DIGITS  # significant digits of every printed number (ui.core.format); the numbers themselves keep all
    present: bool = False  # presenter mode (ui/classroom/presenter.py): larger type, no sidebar, keys move the steps
    vit: VisionState = VisionState()  # the Vision Transformer's pages: its image, weights, sizes and edits

    def replace(self, **changes) -> "AppState":
        return dataclasses.replace(self, **changes)

    @property
    def model_key(self) -> ModelKey:
        return ModelKey(self.preset, self.seed, self.src, self.tgt, self.overrides, self.edits, self.weights)

    def config(self) -> engine.Config:
        return configure(self.preset, **dict(self.overrides))

    def with_settings(self, **changes) -> "AppState":
        """The state with some Config fields set; the overrides keep only the fields that differ from the preset."""
        base = engine.PRESETS[self.preset]
        chosen = {**dict(self.overrides), **changes}
        return self.replace(overrides=tuple(sorted((f, v) for f, v in chosen.items() if getattr(base, f) != v)))



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
            notes.append(LimitError("msg.too_big_with", {**error.args[1], "field": field, "value": _value_text(value),
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


def _shown_setting(config: engine.Config, field: str) -> str:
    """A setting's value as the sidebar shows it: a stack's depth is N where the stack has no depth of its own."""
    stack = {own: stack for stack, own in DEPTHS.items()}.get(field)
    return _value_text(config.depth(stack) if stack else getattr(config, field))


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


def check_weight(value) -> float:
    """A typed weight, or ValueError: finite and within ±MAX_WEIGHT."""
    return finite_within(value, MAX_WEIGHT)


class SliderRange(NamedTuple):
    low: float
    high: float
    step: float
    value: float  # where the slider starts: the weight, or the nearest number the slider holds
    decimals: int  # the step's decimals: a slid value is rounded to them (0.30000000000000004 is 0.3)


def slider_range(value: float) -> SliderRange:
    """A weight's slider: value ± max(1, 2|value|) in about SLIDER_STEPS steps of 1, 2 or 5 × 10^k, its ends on
    the steps, within ±MAX_WEIGHT, so that every number it sends is one check_weight takes. A weight that is not
    one (NaN or ±inf of a diverged training run) starts at 0 or at the nearest end."""
    value = float(value)
    centre = 0.0 if math.isnan(value) else min(max(value, -MAX_WEIGHT), MAX_WEIGHT)
    half = max(1.0, 2 * abs(centre))
    wanted = 2 * half / SLIDER_STEPS
    exponent = math.floor(math.log10(wanted))
    step = min((m * 10.0 ** exponent for m in (1, 2, 5, 10)), key=lambda s: abs(math.log(s / wanted)))
    decimals = max(0, -math.floor(math.log10(step)))
    step = round(step, decimals)
    low = max(-MAX_WEIGHT, round(math.floor((centre - half) / step) * step, decimals))
    high = min(MAX_WEIGHT, round(math.ceil((centre + half) / step) * step, decimals))
    return SliderRange(low, high, step, centre, decimals)


def base_model(preset: str, seed: int, overrides: tuple) -> engine.Model:
    return engine.preset(preset, seed=seed, **dict(overrides))


def model_settings(model: engine.Model) -> dict:
    """The preset, seed and overrides of a state whose base model has this model's shapes (e.g. after training)."""
    base = engine.PRESETS[model.name]
    overrides = {k: v for k, v in model.config.as_dict().items() if getattr(base, k) != v}
    return {"preset": model.name, "seed": model.seed, "overrides": tuple(sorted(overrides.items()))}


def apply_edits(model: engine.Model, edits: tuple) -> tuple[engine.Model, int]:
    """The model with the edited cells written in, and how many edits did not fit its shapes."""
    cells = {}
    for param, index, value in fitting_edits(model.params, edits):
        cells.setdefault(param, []).append((index, value))
    return (model.with_cells(cells) if cells else model), len(edits) - sum(map(len, cells.values()))


def fitting_edits(params, edits: tuple) -> tuple:
    """The edits that name a cell of one of the weights `params` (a model's: name -> array)."""
    def fits(param, index):
        array = params.get(param)
        return array is not None and len(index) == array.ndim and all(0 <= i < n for i, n in zip(index, array.shape))
    return tuple(edit for edit in edits if fits(*edit[:2]))


# ---- the URL -------------------------------------------------------------------------------------------

def encode(state: AppState) -> dict[str, str]:
    query = {"preset": state.preset, "src": state.src, "tgt": state.tgt}
    if state.lang_chosen:
        query["lang"] = state.lang
    if state.seed:
        query["seed"] = str(state.seed)
    if state.overrides:
        query["cfg"] = ",".join(f"{k}:{_value_text(v)}" for k, v in state.overrides)
    if state.edits:
        query["edit"] = _encode_edits(state.edits)
    if state.gen:
        query["gen"] = generation.encode(state.gen)
    if state.weights:
        query["weights"] = state.weights
    if state.digits != DIGITS:
        query["digits"] = str(state.digits)
    if state.present:
        query["present"] = "1"
    query |= vision_state.encode(state.vit)
    if state.vit.edits:
        query["vedit"] = _encode_edits(state.vit.edits)
    return query


def _encode_edits(edits: tuple) -> str:
    return ";".join(f"{p}:{'.'.join(map(str, i))}={v!r}" for p, i, v in edits)


def decode(query, default_lang: str = "en") -> tuple[AppState, list]:
    """The state a link describes, and a note for every part that had to be ignored: the part itself, or a
    LimitError when a sentence is longer than MAX_CHARS (its start is kept) or a weight is refused (msg.edit_bad)."""
    notes, state = [], AppState(lang=default_lang)
    preset = query.get("preset", state.preset)
    if preset in engine.PRESETS:
        state = state.replace(preset=preset)
    else:
        notes.append(f"preset={preset!r}")
    if query.get("lang") in LANGUAGES:
        state = state.replace(lang=query["lang"], lang_chosen=True)
    elif "lang" in query:
        notes.append(f"lang={query['lang']!r}")
    seed = query.get("seed", "0")
    if seed.isascii() and seed.isdigit() and len(seed) <= 10 and int(seed) <= MAX_SEED:
        state = state.replace(seed=int(seed))
    else:
        notes.append(f"seed={seed!r}")
    for side, text in (("src", str(query.get("src", state.src))), ("tgt", str(query.get("tgt", state.tgt)))):
        if len(text) > MAX_CHARS:
            notes.append(LimitError("msg.text_cut", {"side": side, "n": len(text), "high": MAX_CHARS}))
        state = state.replace(**{side: text[:MAX_CHARS]})
    overrides, bad = _decode_overrides(query.get("cfg", ""), state.preset)
    edits, bad_edits = _decode_edits(query.get("edit", ""))
    gen, bad_gen = generation.decode(query.get("gen", ""))
    notes += bad + bad_edits + bad_gen
    weights = query.get("weights", "")
    if weights and not WEIGHTS_ID.fullmatch(weights):
        notes.append(f"weights={weights[:40]!r}")
        weights = ""
    digits = query.get("digits", str(DIGITS))
    if digits not in map(str, range(DIGITS_RANGE[0], DIGITS_RANGE[1] + 1)):
        notes.append(f"digits={digits[:40]!r}")
        digits = DIGITS
    present = query.get("present", "0")
    if present not in ("0", "1"):
        notes.append(f"present={present[:40]!r}")
    vit, bad_vit = vision_state.decode(query)
    vit_edits, bad_vit_edits = _decode_edits(query.get("vedit", ""))
    notes += bad_vit + bad_vit_edits
    return state.replace(overrides=overrides, edits=edits, gen=gen, weights=weights, digits=int(digits),
                         present=present == "1", vit=vit.replace(edits=vit_edits)), notes


def _decode_overrides(text: str, preset: str):
    base, overrides, bad = engine.PRESETS[preset], {}, []
    for part in filter(None, text.split(",")):
        field, _, value = part.partition(":")
        try:
            parsed = parse_field(field, value)
            base.replace(**{field: parsed})  # validates the value on its own
            _check_range(field, parsed)
        except (ValueError, TypeError):
            bad.append(part[:80])
            continue
        if getattr(base, field) != parsed:
            overrides[field] = parsed
    return tuple(sorted(overrides.items())), bad


def _check_range(field, value):
    """The app's own bounds, which its widgets enforce too."""
    if field in APP_LIMITS and not 1 <= value <= APP_LIMITS[field]:
        raise ValueError(field)
    low, high = FLOAT_RANGES.get(field, (None, None))
    if low is not None and isinstance(value, float) and not low <= value <= high:
        raise ValueError(field)


PARAM_NAME = re.compile(r"[A-Za-z0-9_.]{1,60}")  # a weight's name as the engine writes it: enc.0.attn.W_Q


def _decode_edits(text: str):
    """The link's weight edits, and a note for each part left out: unreadable (quoted), or a weight refused by
    check_weight (said why, as the editor says it)."""
    edits, bad = {}, []
    for part in [p for p in text.split(";") if p][:MAX_EDITS]:
        try:
            target, value = part.rsplit("=", 1)
            param, index = target.rsplit(":", 1)
            index = tuple(int(i) for i in index.split("."))
            if not PARAM_NAME.fullmatch(param) or not value:
                raise ValueError(part)
        except ValueError:
            bad.append(part[:80])
            continue
        try:
            edits[(param, index)] = check_weight(value)
        except ValueError:
            bad.append(LimitError("msg.edit_bad", {"param": param, "index": ",".join(map(str, index))[:40],
                                                   "value": literal(value[:80])}))
    return tuple(sorted((p, i, v) for (p, i), v in edits.items())), bad


# What a page shows, in its link (ui/views/drawn.py): a step page's section, layer, sub-layer, head, step and cell; the
# dropout page's place and which dropout of a layer; a stack's measure; the output's position (the generation player's
# step); the padded batch's sentence; the animation's frame; the exercises' set of questions and the answers given
# (engine.exercises.encode_progress, which the page reads part by part); the training page's gradients, of a step's
# output and of a parameter (with its own head picker: phead), and the label smoothing the loss is shown with
VIEW_KEYS = ("section", "layer", "sublayer", "head", "step", "cell", "place", "dropout", "measure", "position",
             "sentence", "frame", "qset", "done", "grad", "param", "phead", "smoothing")
TEXT_VIEW_KEYS = ("step", "done", "grad", "param", "smoothing")
SMOOTHING = re.compile(r"0(?:\.[0-9]{1,2})?")  # 0.05: the page checks it is one its slider offers
STEP_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")  # a step's last name: "scaled", "ln2", "masked_logits"
FULL_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,39}(?:\.[A-Za-z0-9_]{1,40}){0,5}")  # "dec.0.ln3", "enc.0.attn.W_Q"


def encode_view(view: dict) -> dict[str, str]:
    """A page's view in its link, e.g. {"layer": 1, "head": 1, "step": "scaled", "cell": (2, 0)} (positions from 0)
    as layer=2&head=2&step=scaled&cell=2.0: every part but the step and the cell is a position (a section, a layer,
    a head, a frame...), numbered as the page shows it, from 1."""
    query = {}
    for key in VIEW_KEYS:
        if key in view:
            value = view[key]
            query[key] = value if key in TEXT_VIEW_KEYS else ".".join(map(str, value)) if key == "cell" \
                else str(value + 1)
    return query


def decode_view(query) -> tuple[dict, list]:
    """The view a link asks for, and a note for every part that is not one; the page checks the rest (a head it
    has, a step it draws, a cell of its matrix)."""
    view, notes = {}, []
    for key in VIEW_KEYS:
        if key not in query:
            continue
        text = str(query[key])
        value = _view_value(key, text)
        if value is None:
            notes.append(f"{key}={text[:40]!r}")
        else:
            view[key] = value
    return view, notes


def _view_value(key: str, text: str):
    if key == "step":
        return text if STEP_NAME.fullmatch(text) else None
    if key == "done":
        return text if len(text) <= MAX_PROGRESS_CHARS else None
    if key in ("grad", "param"):
        return text if FULL_NAME.fullmatch(text) else None
    if key == "smoothing":
        return text if SMOOTHING.fullmatch(text) else None
    parts = text.split(".")
    if len(parts) != (2 if key == "cell" else 1) or not all(_small_whole(p) for p in parts):
        return None
    numbers = tuple(int(p) for p in parts)
    if key == "cell":
        return numbers
    return numbers[0] - 1 if numbers[0] >= 1 else None


def _small_whole(text: str) -> bool:
    return text.isascii() and text.isdigit() and len(text) <= 6


def _value_text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)
