"""The one place that turns widgets and the URL into a state, and a state into a model and a trace.

app.py calls `build()` once per rerun, before the page runs; pages call `get()`. The engine runs at most
once per distinct state across all sessions (cached), and never in a page.
"""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

import engine
from engine.config import CHOICES, DEPTHS
from engine.tokens import split

from . import model_card, streamlit_internals
from .classroom import LINK as ROOM_LINK
from . import state as app_state
from .format import DIGITS_RANGE
from .i18n import LANGUAGES, language_of, literal, plain_math, translator
from .navigation import ENCODER_DECODER_ONLY, HOME, PAGES, page_file
from .state import APP_LIMITS, DEFAULT_TARGET, FLOAT_RANGES, MAX_CHARS, AppState, LimitError
from .streamlit_internals import forget_stale_widgets
from .weights import WeightsStore

SIZE_FIELDS = ("d_model", "n_heads", "d_k", "d_v", "d_ff", "n_enc_layers", "n_dec_layers")  # depths: Config.depth
CHOICE_FIELDS = ("layer_norm", "norm_placement", "pos_encoding", "activation", "softmax")
BOOL_FIELDS = ("embed_scale", "attn_bias", "ffn_bias", "shared_embeddings", "tied_output", "decoder_only")


@dataclass(frozen=True)
class Context:
    state: AppState
    base: engine.Model  # the preset's model, before the user's edits
    model: engine.Model
    trace: engine.Trace
    t: object  # the translator: t(key, **values) -> str

    @property
    def config(self) -> engine.Config:
        return self.model.config


@st.cache_resource(max_entries=4, show_spinner=False)
def _base_model(preset, seed, overrides):
    return app_state.base_model(preset, seed, overrides)


@st.cache_resource(show_spinner=False)
def weights_store() -> WeightsStore:
    """Trained and uploaded weights, shared by every session of this server and, on disk, by every process of
    this machine that uses the same TRANSFORMER_WEIGHTS_DIR."""
    return WeightsStore.from_environment()


def _weights(weights_id: str) -> engine.Model:
    model = weights_store().get(weights_id)
    if model is None:
        raise LimitError("msg.weights_gone", {"id": weights_id})
    return model


@st.cache_resource(max_entries=16, show_spinner=False)
def _with_words(preset, seed, overrides, weights, words):
    """The model with the typed words its vocabulary lacks (engine.with_words), kept while the words are: each edit
    of a sentence with new words then shares its weights, and their products (engine/products.py)."""
    return engine.with_words(_weights(weights) if weights else _base_model(preset, seed, overrides), *words)


RUNS_KEPT = 64  # engine runs kept for all sessions, one per distinct state (model_key)


@st.cache_resource(max_entries=RUNS_KEPT, show_spinner=False, hash_funcs=app_state.CACHE_HASH)
def _run(model_key):
    """One engine run per distinct state, shared by every session (a trace is read-only)."""
    preset, seed, src, tgt, overrides, edits, weights = model_key
    base = _weights(weights) if weights else _base_model(preset, seed, overrides)
    new_words = base.vocab.new_words(src, tgt)
    if new_words:
        base = _with_words(preset, seed, overrides, weights, new_words)
    model, dropped = app_state.apply_edits(base, edits)
    return base, model, model.run(src, tgt or None), dropped


def unedited_trace(state: AppState) -> engine.Trace:
    """The run of a state without the user's edits (the model it started from: the preset's, trained or uploaded
    weights), from the same cache as the page's trace: the comparison of a step with the unedited model."""
    return _run(state.without_edits().model_key)[2]


def run_model(model_key) -> engine.Model:
    """The model (edits applied) of a state's model_key, from the same cache as the page's trace."""
    return _run(model_key)[1]


def build() -> Context:
    """Read the controls, build (or keep) the state, and remember the context for the page."""
    if "state" not in st.session_state:
        _start_session()
    else:  # a link's view is for the page it opened, on its first run (ui/views.py), as is a presenter's move
        st.session_state.pop("link_view", None)
        if "present.view" in st.session_state:  # (ui/presenter.py)
            st.session_state.link_view = st.session_state.pop("present.view")
    pending = st.session_state.pop("adopt_pending", None)
    if pending is not None:
        adopt_model(pending["model"], pending["origin"], **pending["changes"])
    good: AppState = st.session_state.state
    t = translator(st.session_state.get("ctl.lang", good.lang))
    forget_stale_widgets()
    context = _make(_controls(good, t), good, t, st.sidebar)
    _describe_model(st.sidebar, context)
    if context.state.edits:
        st.sidebar.caption(t("ctl.edits"))
        st.sidebar.button(t("ctl.reset_edits"), key="ctl.reset_edits", on_click=lambda: set_state(
            st.session_state.state.without_edits()))
    return context


def _make(candidate: AppState, good: AppState, t, notes) -> Context:
    """The context of a candidate state, or of the last good one (with a message in `notes`) if it is refused."""
    try:
        app_state.check_limits(candidate)
        base, model, trace, dropped = _run(candidate.model_key)
    except ValueError as error:  # the app's limits (LimitError) or the engine's
        notes.error(t("msg.kept", error=refusal(t, error)))
        candidate = good
        base, model, trace, dropped = _run(good.model_key)
    st.session_state.state = candidate
    write_link(candidate)
    if dropped:
        notes.warning(t("msg.edits_dropped", n=dropped))
    context = Context(candidate, base, model, trace, t)
    st.session_state["context"] = context
    return context


def write_link(state: AppState, view: dict | None = None) -> None:
    """The address bar: the state, then the view of the page (view=None keeps the one it holds: a step page writes
    its own when it has been drawn; a switch to another page clears it in the browser), then the session's room
    (ui/classroom.py)."""
    current = {key: st.query_params.get_all(key) for key in st.query_params}
    query = app_state.encode(state)
    if view is None:
        query |= {key: current[key][-1] for key in app_state.VIEW_KEYS if current.get(key)}
    else:
        query |= app_state.encode_view(view)
    query |= st.session_state.get(ROOM_LINK, {})
    if current != {key: [v] for key, v in query.items()}:
        # each write is a message to the browser, so the URL is written only when it changes
        st.query_params.from_dict(query)


def refusal(t, error: ValueError) -> str:
    """Why a setting was refused, in the app's language where the catalog has the words."""
    code = getattr(error, "code", None)  # the engine's ConfigError
    if isinstance(error, LimitError):
        key, values = error.args
    elif code:
        key, values = f"msg.{code}", error.values
    else:
        return str(error)
    if "side" in values:
        values = {**values, "side": t(f"side.{values['side']}")}
    return t(key, **values)


def navigation(t) -> dict:
    """The navigation's pages by section, made once per session and language (making them costs each rerun ~1 ms)."""
    return _pages(t)[0]


def page_entry(t, page: str):
    """A page's st.Page in this session's navigation: st.page_link given it resolves no file path (two realpath
    calls, ~0.7 ms of every link on every rerun)."""
    return _pages(t)[1][page]


def _pages(t) -> tuple[dict, dict]:
    """({section: its pages' entries}, {page: its entry}), kept per session and language."""
    key = f"navigation.{t.lang}"
    if key not in st.session_state:
        entries = {page: _entries(t, page) for pages in PAGES.values() for page in pages}
        st.session_state[key] = ({t(f"section.{section}"): [entry for page in pages for entry in entries[page]]
                                  for section, pages in PAGES.items()}, {page: e[0] for page, e in entries.items()})
    return st.session_state[key]


def _entries(t, page) -> list:
    """A page's navigation entry. Streamlit serves the default page at "/" only, never at its own name, so /overview
    was "Page not found": a hidden second entry of the same file answers there. The navigation shows plain text:
    a title's math is written in Unicode there."""
    title = plain_math(t(f"page.{page}"))
    if page != HOME:
        return [st.Page(page_file(page), title=title, url_path=page)]
    return [st.Page(page_file(page), title=title, url_path="home", default=True),  # "home" is reserved, not served
            st.Page(page_file(page), title=title, url_path=page, visibility="hidden")]


def get() -> Context:
    """The page's context. A step page is a fragment (st.fragment): its own widgets rerun the page alone, without
    app.py and the sidebar, so after an edit made there the new state's context is made here."""
    if "context" not in st.session_state:
        _leave_folder_mode()
    context = st.session_state["context"]
    state = st.session_state.state
    if state is not context.state:
        if bool(state.edits) != bool(context.state.edits) or _model_settings(state) != _model_settings(context.state):
            st.rerun(scope="app")  # the sidebar shows the model in use and whether weights are edited
        context = _make(state, context.state, context.t, st)
    return context


def _model_settings(state: AppState) -> tuple:
    return state.preset, state.seed, state.overrides, state.weights


def _leave_folder_mode():
    """A deep link opened before any session ran app.py finds Streamlit still in its legacy mode, where a
    page of pages/ runs without the entry point. Switch to st.navigation's mode and run the entry point; with the
    workaround off (ui/streamlit_internals.py), go to the entry point, whose st.navigation leaves folder mode."""
    if streamlit_internals.leave_folder_mode():
        st.rerun()
    st.switch_page("app.py")


def set_state(new: AppState, reset_editors: bool = True) -> None:
    """Replace the state; reset_editors redraws the weight editors from the model (after a reset, a preset
    change or a refused value), instead of keeping what was typed into them."""
    st.session_state.state = new
    if reset_editors:
        st.session_state["edit_version"] = st.session_state.get("edit_version", 0) + 1


def adopt(new: AppState) -> None:
    """Switch to a whole other state from a callback; the sidebar's widgets follow it."""
    set_state(new)
    _sync_widgets(new)


def use_settings(changes: dict) -> None:
    """From a callback: some Config fields set (a step's paper form, say), as the sidebar's options would set them;
    trained or uploaded weights, which fit only their own settings, give way to the seed's random weights (and the
    edits made to them go too)."""
    state = st.session_state.state.with_settings(**changes)
    adopt(state.replace(weights="", edits=()) if state.weights else state)


def adopt_model(model: engine.Model, origin: dict | None = None, **changes) -> None:
    """Make trained or uploaded weights the starting point of every page (from a callback); origin: where they came
    from (ui.weights.ORIGIN_FIELDS), which the sidebar says."""
    weights = weights_store().put(model, origin)
    adopt(st.session_state.state.replace(edits=(), weights=weights, **app_state.model_settings(model), **changes))


def adopt_model_later(model: engine.Model, origin: dict | None = None, **changes) -> None:
    """adopt_model from a page's body (after the sidebar's widgets exist): done at the start of the next run."""
    st.session_state["adopt_pending"] = {"model": model, "origin": origin, "changes": changes}


def check_model_limits(model: engine.Model) -> None:
    """LimitError if a loaded model is bigger than the app shows."""
    app_state.check_limits(AppState(**app_state.model_settings(model)))


def _start_session():
    query = st.query_params.to_dict()
    state, notes = app_state.decode(query, default_lang=language_of(st.context.locale))
    st.session_state.link_view, view_notes = app_state.decode_view(query)
    notes += view_notes
    if state.weights and weights_store().get(state.weights) is None:
        notes.append(LimitError("msg.weights_gone", {"id": state.weights}))
        state = state.replace(weights="", edits=())
    try:  # a link's settings may be fine one by one and still not fit together
        app_state.check_limits(state)
        _run(state.model_key)
    except ValueError as error:
        notes.append(error)
        state = AppState(lang=state.lang, lang_chosen=state.lang_chosen)
    st.session_state.state = state
    st.session_state.url_notes = notes
    _sync_widgets(state)


def _sync_widgets(state: AppState):
    """Put the state's values into the control widgets (at the start and after a preset change). The option
    widgets get theirs when they are drawn: a value kept for a widget not on the page is one more entry that
    Streamlit copies for every keyed widget of every rerun."""
    st.session_state.update({"ctl.lang": state.lang, "ctl.preset": state.preset, "ctl.src": state.src,
                             "ctl.tgt": state.tgt, "ctl.present": state.present})
    if st.session_state.get("ctl.options_drawn"):
        st.session_state.update(_option_values(state))


def _option_values(state: AppState) -> dict:
    """The option widgets' values for a state, by widget key."""
    config = state.config()
    values = {f"ctl.{field}": getattr(config, field) for field in SIZE_FIELDS + CHOICE_FIELDS + BOOL_FIELDS + ("eps",)}
    values |= {f"ctl.{field}": _widget_depths(config)[stack] for stack, field in DEPTHS.items()}
    values["ctl.seed"], values["ctl.digits"] = state.seed, state.digits
    values["ctl.divisor_kind"] = "sqrt" if config.attn_divisor == "sqrt_dk" else "number"
    values["ctl.divisor"] = 30.0 if config.attn_divisor == "sqrt_dk" else float(config.attn_divisor)
    return values


def _on_preset_change():
    preset = st.session_state["ctl.preset"]
    if preset not in engine.PRESETS:  # only a forged message can name another
        return
    old = st.session_state.state
    fresh = AppState(preset=preset, seed=old.seed, src=st.session_state["ctl.src"], tgt=st.session_state["ctl.tgt"],
                     lang=old.lang, lang_chosen=old.lang_chosen, gen=old.gen)
    set_state(fresh)
    _sync_widgets(fresh)


def whole_number_input(container, label: str, key: str, low: int, high: int, on_change=None, disabled=False):
    """A whole number (a size, a seed, a count). A float input shown without decimals ("%g"): Streamlit 1.67's
    whole-number input raises on a forged NaN or inf (int() before its range check), where a float input puts its
    default back. on_change runs after the value is made whole."""
    container.number_input(label, min_value=float(low), max_value=float(high), step=1.0, format="%g", key=key,
                           on_change=_on_whole_number, args=(key, on_change), disabled=disabled)


def _on_whole_number(key, then):
    """Drop a typed fraction (2.5 becomes 2), as a whole-number input does in the browser."""
    st.session_state[key] = int(st.session_state[key])
    if then is not None:
        then()


def _on_heads_change():
    """Keep d_k = d_v = d_model / h when the sizes divide, as the paper does."""
    d_model, heads = st.session_state["ctl.d_model"], st.session_state["ctl.n_heads"]
    if heads and d_model % heads == 0:
        st.session_state["ctl.d_k"] = st.session_state["ctl.d_v"] = d_model // heads


def _controls(good: AppState, t) -> AppState:
    """The state the sidebar's widgets ask for."""
    sidebar = st.sidebar
    notes = st.session_state.pop("url_notes", [])
    for note in notes:
        sidebar.warning(t("msg.url", detail=refusal(t, note) if isinstance(note, ValueError) else literal(note)))
    sidebar.segmented_control(t("lang.label"), list(LANGUAGES), format_func=LANGUAGES.get, key="ctl.lang",
                              required=True)
    sidebar.toggle(t("ctl.present"), key="ctl.present", help=t("ctl.present_help"))
    sidebar.selectbox(t("ctl.preset"), list(engine.PRESETS), format_func=lambda p: t(f"preset.{p}"),
                      key="ctl.preset", on_change=_on_preset_change)
    sidebar.text_input(t("ctl.src"), good.src, key="ctl.src", max_chars=MAX_CHARS)
    own = ".decoder_only" if _decoder_only(good) else ""  # whose decoder reads the source first
    sidebar.text_input(t(f"ctl.tgt{own}"), good.tgt, key="ctl.tgt", max_chars=MAX_CHARS)
    sos_only = not split(st.session_state["ctl.tgt"])  # the post's own decoder step
    sidebar.button(t(("ctl.tgt_default" if sos_only else "ctl.tgt_sos") + own, target=DEFAULT_TARGET),
                   key="ctl.tgt_toggle", on_click=_set_target, args=(DEFAULT_TARGET if sos_only else "",))
    _offer_replaced_text(sidebar, t)
    options = sidebar.expander(t("ctl.options"), key="ctl.options", on_change="rerun")
    if options.open:  # the option widgets are drawn (and cost a rerun's time) only while they are shown
        if not st.session_state.get("ctl.options_drawn"):  # hidden widgets forget their values: give them back
            st.session_state.update(_option_values(good))
        with options:
            digits = int(st.slider(t("ctl.digits"), *DIGITS_RANGE, key="ctl.digits", help=t("ctl.digits_help")))
            overrides, seed = _option_widgets(good, t)  # digits: a forged 4.5, within the slider's range, is 4
    else:
        overrides, seed, digits = good.overrides, good.seed, good.digits
    st.session_state["ctl.options_drawn"] = options.open
    same_model = (seed, overrides) == (good.seed, good.overrides)  # trained weights fit only their own model
    lang = st.session_state["ctl.lang"] if st.session_state["ctl.lang"] in LANGUAGES else good.lang
    return good.replace(lang=lang, lang_chosen=good.lang_chosen or lang != good.lang, digits=digits,
                        src=st.session_state["ctl.src"], present=st.session_state["ctl.present"] is True,
                        tgt=st.session_state["ctl.tgt"], seed=seed, overrides=overrides,
                        weights=good.weights if same_model else "")


def _describe_model(sidebar, context: Context) -> None:
    """The model in use: its sizes, where its weights came from and, for weights the server holds, how long their
    link works, with a way back to the preset's weights."""
    state, t, store = context.state, context.t, weights_store()
    sidebar.caption(t("model.in_use_line", model=model_description(context)))
    if not state.weights:
        return
    if store.on_disk(state.weights):
        sidebar.caption(t("model.kept", id=state.weights, files=store.max_files, mb=store.max_bytes // 2**20))
    else:
        sidebar.caption(t("model.kept_memory", id=state.weights, n=store.memory))
    sidebar.button(t("ctl.drop_weights"), key="ctl.drop_weights", on_click=lambda: set_state(
        st.session_state.state.replace(weights="", edits=())))


def model_description(context: Context) -> str:
    """The model in use, in a sentence or two: its sizes and where its weights came from."""
    state = context.state
    origin = weights_store().origin(state.weights) if state.weights else None
    return model_card.describe(context.t, state.preset, state.seed, context.config, origin, bool(state.weights))


def keep_text_until_restored(src: str, tgt: str) -> None:
    """Before a sentence pair replaces the learner's (after training): keep theirs, which the sidebar offers back."""
    state = st.session_state.state
    if (state.src, state.tgt) != (src, tgt):
        st.session_state["text.replaced"] = {"old": (state.src, state.tgt), "new": (src, tgt)}


def _offer_replaced_text(sidebar, t) -> None:
    """While the sentences are the ones that replaced the learner's: say so, with a button to bring theirs back."""
    replaced = st.session_state.get("text.replaced")
    if replaced is None:
        return
    if (st.session_state["ctl.src"], st.session_state["ctl.tgt"]) != replaced["new"]:
        del st.session_state["text.replaced"]  # the learner has typed other sentences since
        return
    (src, tgt), (new_src, new_tgt) = (map(model_card.code, pair) for pair in (replaced["old"], replaced["new"]))
    sidebar.info(t("model.text_replaced", src=src, tgt=tgt, new_src=new_src, new_tgt=new_tgt))
    sidebar.button(t("model.text_restore"), key="ctl.restore_text", on_click=_restore_text)


def _decoder_only(good: AppState) -> bool:
    """Whether the model asked for is decoder-only: the option's toggle while it is drawn (newer than the state,
    which this run's widgets have not made yet), else the state's."""
    if st.session_state.get("ctl.options_drawn") and "ctl.decoder_only" in st.session_state:
        return st.session_state["ctl.decoder_only"] is True
    return good.config().decoder_only


def _restore_text():
    src, tgt = st.session_state.pop("text.replaced")["old"]
    st.session_state["ctl.src"], st.session_state["ctl.tgt"] = src, tgt


def _set_target(text: str):
    st.session_state["ctl.tgt"] = text


def _option_widgets(good: AppState, t) -> tuple:
    """The Config widgets; returns the fields that differ from the preset, as sorted pairs, and the seed."""
    st.caption(t("ctl.sizes"))
    left, right = st.columns(2)
    for i, field in enumerate(SIZE_FIELDS):
        whole_number_input(left if i % 2 == 0 else right, field, f"ctl.{field}", 1, APP_LIMITS[field],
                           on_change=_on_heads_change if field in ("d_model", "n_heads") else None,
                           disabled=field == "n_enc_layers" and st.session_state["ctl.decoder_only"])  # no encoder
    whole_number_input(st, t("ctl.seed"), "ctl.seed", 0, 2**32 - 1)
    st.radio(t("ctl.divisor"), ["sqrt", "number"], format_func=lambda k: t(f"ctl.divisor.{k}"),
             key="ctl.divisor_kind", horizontal=True)
    if st.session_state["ctl.divisor_kind"] == "number":
        low, high = FLOAT_RANGES["attn_divisor"]
        st.number_input(t("ctl.divisor.value"), min_value=low, max_value=high, key="ctl.divisor")
    for field in CHOICE_FIELDS:
        st.selectbox(t(f"ctl.{field}"), CHOICES[field], format_func=lambda c: t(f"choice.{c}"), key=f"ctl.{field}")
    st.number_input(t("ctl.eps"), min_value=FLOAT_RANGES["eps"][0], max_value=FLOAT_RANGES["eps"][1], format="%.0e",
                    key="ctl.eps")
    for field in BOOL_FIELDS:
        st.toggle(t(f"ctl.{field}"), key=f"ctl.{field}")
    chosen = {f: st.session_state[f"ctl.{f}"] for f in CHOICE_FIELDS + BOOL_FIELDS + ("eps",)}
    chosen |= {f: int(st.session_state[f"ctl.{f}"]) for f in SIZE_FIELDS}  # a float after Streamlit resets one
    chosen |= _depth_settings(good.config(), chosen.pop("n_enc_layers"), chosen.pop("n_dec_layers"))
    chosen["attn_divisor"] = "sqrt_dk" if st.session_state["ctl.divisor_kind"] == "sqrt" else float(
        st.session_state["ctl.divisor"])
    base = engine.PRESETS[good.preset]
    return tuple(sorted((f, v) for f, v in chosen.items() if getattr(base, f) != v)), int(st.session_state["ctl.seed"])


def _depth_settings(config: engine.Config, enc: int, dec: int) -> dict:
    """The depth fields for the depths the widgets show: the config's own while they are its depths (a link's
    n_enc_layers stays as it was written); else N for both stacks, or N for the encoder and the decoder's own."""
    if (enc, dec) == tuple(_widget_depths(config).values()):
        return {field: getattr(config, field) for field in ("n_layers", *DEPTHS.values())}
    return {"n_layers": enc, "n_enc_layers": None, "n_dec_layers": None if dec == enc else dec}


def _widget_depths(config: engine.Config) -> dict:
    """The depths the widgets show: a decoder-only model's encoder has none, and its widget keeps the depth the
    encoder-decoder model would have (the widget's least is 1)."""
    return {stack: config.replace(decoder_only=False).depth(stack) for stack in DEPTHS}


def refuse_page(ctx: Context, page) -> bool:
    """Draw a page of the encoder-decoder model only (navigation.ENCODER_DECODER_ONLY) as the title and one line
    saying the decoder-only model in use has nothing there, with a button back to the encoder-decoder model; True if
    so (the page is not run)."""
    name = page.url_path or HOME
    if not ctx.config.decoder_only or name not in ENCODER_DECODER_ONLY:
        return False
    st.title(ctx.t(f"page.{name}"))
    st.info(ctx.t({"train": "msg.no_training", "animation": "msg.no_animation"}.get(name, "msg.no_encoder")))
    st.button(ctx.t("ctl.encoder_decoder"), key="ctl.encoder_decoder", on_click=use_settings,
              args=({"decoder_only": False},))
    return True


@st.cache_resource(max_entries=16, show_spinner=False)
def blog_variant(overrides: tuple) -> engine.Trace:
    """The post's own example ("Hello World", hello-world preset) with some options changed."""
    return engine.preset("hello-world", **dict(overrides)).run("Hello World")
