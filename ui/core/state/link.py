"""A session's link: the state as the address bar holds it, one row of LINK per part, and a page's view. Readable on
purpose, e.g.
    ?preset=hello-world&src=Hello+World&cfg=attn_divisor:sqrt_dk&edit=enc.0.attn.W_Q:0.1.2=1.5
    ?vimg=7&vpx=3.4=1;3.5=0.5&vw=random&vseed=2&vcfg=patch:2,d_model:16&vedit=img.E:0.1=1.5
(the second opens test image 7 with two pixels inked, the random weights of seed 2 at patch size 2 and D = 16, and one
weight of the patch projection edited). A part is written in LINK's order when its value is not the default; a link is
read in the same order, each part by its codec (codecs.py), and every part refused is noted. Pure Python."""
from __future__ import annotations

import re
from operator import attrgetter
from typing import Callable, NamedTuple

import engine
from engine.exercises import MAX_PROGRESS_CHARS
from engine.values import MAX_SEED

from ui.core.format import DIGITS, DIGITS_RANGE
from ui.core.i18n import LANGUAGES
from ui.core.state.app import AppState
from ui.core.state.codecs import (Choice, Codec, ConfigSettings, Edits, GenerationSettings, ModelName, OneOf, Pixels,
                                  Sentence, StoredWeights, VisionSizes, Whole)
from ui.core.state.vision import RANDOM, SHIPPED, TEST_IMAGES

ALWAYS = object()  # a field's default that no value has: the part is always written


class Place(NamedTuple):
    """Where a link's part lives in AppState: its value (get) and the state with another value (put)."""
    get: Callable
    put: Callable


def attribute(path: str) -> Place:
    """A field of the state ("seed") or of its Vision Transformer's part ("vit.image")."""
    outer, _, name = path.rpartition(".")

    def put(state: AppState, value) -> AppState:
        if not outer:
            return state.replace(**{name: value})
        return state.replace(**{outer: getattr(state, outer).replace(**{name: value})})
    return Place(attrgetter(path), put)


# A link that names a language chose it (lang_chosen); without one the browser's language is the state's.
CHOSEN_LANGUAGE = Place(lambda state: state.lang if state.lang_chosen else None,
                        lambda state, lang: state.replace(lang=lang, lang_chosen=True))


def _with_vision_sizes(state: AppState, sizes: tuple) -> AppState:
    """The shipped model has its own sizes only: a link with others and no weights runs random ones."""
    vit = state.vit
    return state.replace(vit=vit.replace(sizes=sizes, weights=RANDOM if sizes and vit.weights == SHIPPED else
                                         vit.weights))


class Field(NamedTuple):
    key: str  # the part's name in the link
    codec: Codec
    place: Place
    default: object = ALWAYS  # the value a link leaves out (and a state keeps when its part is refused or missing)
    quoted: int | None = 40  # the characters of a refused part a note quotes (None: all)

    def read(self, text: str, state: AppState) -> tuple[AppState, list]:
        try:
            value, notes = self.codec.decode(text, state)
        except ValueError:
            return state, [f"{self.key}={text[:self.quoted]!r}"]
        return self.place.put(state, value), notes


LINK = (  # the settings part (cfg) is read after the preset it differs from; the ViT's sizes (vcfg) after its weights
    Field("preset", OneOf(engine.PRESETS), attribute("preset"), quoted=None),
    Field("src", Sentence("src"), attribute("src")),
    Field("tgt", Sentence("tgt"), attribute("tgt")),
    Field("lang", OneOf(LANGUAGES), CHOSEN_LANGUAGE, None, quoted=None),
    Field("seed", Whole(0, MAX_SEED), attribute("seed"), 0, quoted=None),
    Field("cfg", ConfigSettings(), attribute("overrides"), ()),
    Field("edit", Edits(), attribute("edits"), ()),
    Field("gen", GenerationSettings(), attribute("gen"), ()),
    Field("weights", StoredWeights(""), attribute("weights"), ""),
    Field("model", ModelName(), attribute("model"), ""),
    Field("digits", Choice({str(n): n for n in range(DIGITS_RANGE[0], DIGITS_RANGE[1] + 1)}), attribute("digits"),
          DIGITS),
    Field("present", Choice({"0": False, "1": True}), attribute("present"), False),
    Field("vimg", Whole(1, TEST_IMAGES, first=1), attribute("vit.image"), 0),
    Field("vpx", Pixels(), attribute("vit.pixels"), ()),
    Field("vw", StoredWeights(SHIPPED, RANDOM), attribute("vit.weights"), SHIPPED),
    Field("vseed", Whole(0, MAX_SEED), attribute("vit.seed"), 0),
    Field("vcfg", VisionSizes(), Place(attrgetter("vit.sizes"), _with_vision_sizes), ()),
    Field("vedit", Edits(), attribute("vit.edits"), ()),
)


def encode(state: AppState) -> dict[str, str]:
    query = {}
    for field in LINK:
        value = field.place.get(state)
        if field.default is ALWAYS or value != field.default:
            query[field.key] = field.codec.encode(value)
    return query


def decode(query, default_lang: str = "en") -> tuple[AppState, list]:
    """The state a link describes, and a note for every part that had to be ignored: the part itself, or a
    LimitError when a sentence is longer than MAX_CHARS (its start is kept) or a weight is refused (msg.edit_bad)."""
    state, notes = AppState(lang=default_lang), []
    for field in LINK:
        if field.key in query:
            state, noted = field.read(str(query[field.key]), state)
            notes += noted
    return state, notes


# ---- a page's view -------------------------------------------------------------------------------------------------

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
    a head, a frame...), numbered as the page shows it, from 1 (a stack page's sections as before they were
    reordered: navigation.STACK_SECTIONS)."""
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
