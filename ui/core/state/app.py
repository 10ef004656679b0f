"""The whole state of a session: the preset, its options, the sentences, the typed weights, the language, the
generation settings and the Vision Transformer's part (vision.py). One frozen object; what changes it returns another.
Pure Python, no Streamlit."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import NamedTuple

import engine
from engine.presets import configure

from ui.core.format import DIGITS
from ui.core.state.vision import Edited, VisionState

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
    model: str  # a real translator's name (ui.stores.models), or "": the preset's or the stored weights


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
    model: str = ""  # a real translator the server loads by name (ui.stores.models), or "": weights says
    digits: int = DIGITS  # significant digits of every printed number (ui.core.format); the numbers themselves keep all
    present: bool = False  # presenter mode (ui/classroom/presenter.py): larger type, no sidebar, keys move the steps
    vit: VisionState = VisionState()  # the Vision Transformer's pages: its image, weights, sizes and edits

    def replace(self, **changes) -> "AppState":
        return dataclasses.replace(self, **changes)

    @property
    def model_key(self) -> ModelKey:
        return ModelKey(self.preset, self.seed, self.src, self.tgt, self.overrides, self.edits, self.weights,
                        self.model)

    @property
    def own_weights(self) -> bool:
        """Whether the weights are not the preset's random ones (stored or a real translator's): they fit only
        their own settings, and what they learned is not the seed's."""
        return bool(self.weights or self.model)

    def config(self) -> engine.Config:
        return configure(self.preset, **dict(self.overrides))

    def with_settings(self, **changes) -> "AppState":
        """The state with some Config fields set; the overrides keep only the fields that differ from the preset."""
        base = engine.PRESETS[self.preset]
        chosen = {**dict(self.overrides), **changes}
        return self.replace(overrides=tuple(sorted((f, v) for f, v in chosen.items() if getattr(base, f) != v)))
