"""The engine's runs, cached for every session of the process: one run per distinct state (model_key), the preset
and uploaded models it starts from, and the post's own example with options changed. The engine runs here and
never in a page."""
from __future__ import annotations

import contextlib

import streamlit as st

import engine
from engine import vit, vit_train
from engine.config import ConfigError
from ui.core import state as app_state
from ui.core.i18n import literal
from ui.core.state import vision as vision_state
from ui.core.state import AppState, LimitError
from ui.core.state.vision import VisionState
from ui.stores import models
from ui.stores.weights import WeightsStore

RUNS_KEPT = 64  # engine runs kept for all sessions, one per distinct state (model_key)
TRAINED_CORPUS = "en-es"  # the shipped trained model ("Hello World" -> "hola mundo"), one click from any page
MARIAN_PRESET = "paper"  # opus-mt is the paper's base model with a few departures (marian/folder.py)


@st.cache_resource(max_entries=4, show_spinner=False)
def _base_model(preset, seed, overrides):
    return app_state.base_model(preset, seed, overrides)


@st.cache_resource(max_entries=1, show_spinner=False)
def shipped_trained():
    """The shipped model trained on TRAINED_CORPUS (engine.trained), loaded once per process."""
    return engine.trained(TRAINED_CORPUS)


@st.cache_resource(show_spinner=False)
def weights_store() -> WeightsStore:
    """Trained and uploaded weights, shared by every session of this server and, on disk, by every process of
    this machine that uses the same TRANSFORMER_WEIGHTS_DIR."""
    return WeightsStore.from_environment()


def _weights(weights_id: str) -> engine.Model:
    model = weights_store().get(weights_id)
    if not isinstance(model, engine.Model):  # gone, or a Vision Transformer's id (vw=) given as weights=
        raise LimitError("msg.weights_gone", {"id": weights_id})
    return model


@st.cache_resource(max_entries=2, show_spinner=False)
def marian_model(name: str) -> tuple[engine.Model, dict]:
    """(model, generation settings) of a real translator of the models directory (ui.stores.models), loaded once
    per process: opus-mt's 74 million weights are 600 MB as float64, so at most two are kept. A refusal is not
    cached (a folder fixed or fetched later loads)."""
    with _values_as_code():
        return models.load(name, models.models_dir())


def linked_marian(name: str) -> tuple[engine.Model, dict]:
    """marian_model of a link's name, which must be a folder of the models directory already (fetched by the box on
    this server)."""
    with _values_as_code():
        models.check_present(name, models.models_dir())
    return marian_model(name)


def load_marian(typed: str) -> str:
    """The name of the translator typed into the box (a folder, a Hub id or a path inside the models directory),
    loaded (marian_model)."""
    with _values_as_code():
        name = models.model_name(typed, models.models_dir())
    marian_model(name)
    return name


@contextlib.contextmanager
def _values_as_code():
    """A refusal's values shown as code, not Markdown: they are typed text, or a Hub repository's files (anyone's)."""
    try:
        yield
    except ConfigError as error:
        error.values = {k: literal(v) if isinstance(v, str) else v for k, v in error.values.items()}
        raise


def marian_settings(name: str) -> dict:
    """The state's preset, seed and overrides of a real translator of the models directory (linked_marian): the
    paper's base model with Marian's settings (engine.presets.configure of them is the model's Config), so every
    page reads its options as a preset's."""
    config, base = linked_marian(name)[0].config, engine.PRESETS[MARIAN_PRESET]
    overrides = {k: v for k, v in config.as_dict().items() if getattr(base, k) != v}
    return {"preset": MARIAN_PRESET, "seed": 0, "overrides": tuple(sorted(overrides.items()))}


@st.cache_resource(max_entries=16, show_spinner=False)
def _with_words(preset, seed, overrides, weights, words):
    """The model with the typed words its vocabulary lacks (engine.with_words), kept while the words are: each edit
    of a sentence with new words then shares its weights, and their products (engine/products.py)."""
    return engine.with_words(_weights(weights) if weights else _base_model(preset, seed, overrides), *words)


@st.cache_resource(max_entries=RUNS_KEPT, show_spinner=False, hash_funcs=app_state.CACHE_HASH)
def run(model_key):
    """(base model, model with edits, trace, edits that did not fit) of a state's model_key: one engine run per
    distinct state, shared by every session (a trace is read-only)."""
    preset, seed, src, tgt, overrides, edits, weights, marian = model_key
    base = marian_model(marian)[0] if marian else _weights(weights) if weights else _base_model(preset, seed, overrides)
    new_words = base.vocab.new_words(src, tgt)
    if new_words:
        base = _with_words(preset, seed, overrides, weights, new_words)
    model, dropped = app_state.apply_edits(base, edits)
    return base, model, model.run(src, tgt or None), dropped


def unedited_trace(state: AppState, vision: bool = False) -> engine.Trace:
    """The run of a state without the user's edits (the model it started from: the preset's, trained or uploaded
    weights), from the same cache as the page's trace: the comparison of a step with the unedited model. vision: the
    Vision Transformer's run (state.vit)."""
    if vision:
        return run_vit(state.vit.without_edits())[2]
    return run(state.without_edits().model_key)[2]


def run_model(model_key) -> engine.Model:
    """The model (edits applied) of a state's model_key, from the same cache as the page's trace."""
    return run(model_key)[1]


def check_model_limits(model: engine.Model) -> None:
    """LimitError if a loaded model is bigger than the app shows."""
    app_state.check_limits(AppState(**app_state.model_settings(model)))


@st.cache_resource(max_entries=16, show_spinner=False)
def blog_variant(overrides: tuple) -> engine.Trace:
    """The post's own example ("Hello World", hello-world preset) with some options changed."""
    return engine.preset("hello-world", **dict(overrides)).run("Hello World")


# ---- the Vision Transformer -----------------------------------------------------------------------------------------

@st.cache_resource(show_spinner=False)
def shipped_vit() -> tuple[vit.VisionTransformer, dict]:
    """The trained Vision Transformer the repository ships, and its facts (test accuracy, steps)."""
    return vit_train.load(vit_train.SHIPPED)


@st.cache_resource(max_entries=4, show_spinner=False)
def _random_vit(sizes: tuple, seed: int) -> vit.VisionTransformer:
    return vit.VisionTransformer.initial(vit.ViTConfig(**dict(sizes)), seed)


def _base_vit(state: VisionState) -> vit.VisionTransformer:
    if state.shipped:
        return shipped_vit()[0]
    if state.weights == vision_state.RANDOM:
        return _random_vit(state.sizes, state.seed)
    model = _stored_vit(state.weights)
    if model is None:  # the store dropped them during the session: the page says which model it keeps
        raise LimitError("msg.vit_weights_lost", {"id": state.weights})
    return model


def _stored_vit(weights_id: str) -> vit.VisionTransformer | None:
    model = weights_store().get(weights_id)
    return model if isinstance(model, vit.VisionTransformer) else None


def vit_from_link(state: VisionState) -> tuple[VisionState, list]:
    """A link's Vision Transformer part as the pages can run it, and a note if its trained weights are gone (this
    server never held them, or dropped them): then the weights of its sizes, shipped or random, without edits."""
    if state.weights in (vision_state.SHIPPED, vision_state.RANDOM) or _stored_vit(state.weights) is not None:
        return state, []
    instead = state.replace(weights=vision_state.RANDOM if state.sizes else vision_state.SHIPPED, edits=())
    said = "msg.vit_weights_gone_random" if instead.sizes else "msg.vit_weights_gone"
    return instead, [LimitError(said, {"id": state.weights, "seed": state.seed})]


@st.cache_resource(max_entries=RUNS_KEPT, show_spinner=False, hash_funcs={VisionState: repr})
def run_vit(state: VisionState):
    """(base model, model with edits, trace of the state's image, edits that did not fit): one run per distinct
    state, shared by every session."""
    base = _base_vit(state)
    model, dropped = app_state.apply_edits(base, state.edits)
    return base, model, model.run(vision_state.image(state)), dropped
