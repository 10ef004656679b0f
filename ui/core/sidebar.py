"""The sidebar's controls, which app.py reads once per run with `build()`: the language, presenter mode, the preset,
the sentences, the model's options (drawn only while open), the model in use and the box that loads a real translator
(ui.stores.models); and the calls that switch to another state (`adopt`, `use_settings`, `adopt_model`), after which
the sidebar's widgets follow it.
"""
from __future__ import annotations

import streamlit as st

import engine
from engine.config import CHOICES, DEPTHS
from engine.tokens import PAD, SOS, split
from ui.core import model_card, runs, session, session_store, state as app_state
from ui.core.format import DIGITS_RANGE
from ui.core.i18n import LANGUAGES, language_of, literal, translator
from ui.core.session import Context, set_state
from ui.core.session_store import (ADOPT_PENDING, LINK_VIEW, MARIAN_PENDING, PRESENT_VIEW, STATE, TEXT_REPLACED,
                                   URL_NOTES, WHOLE_VIEW)
from ui.core.state import APP_LIMITS, AppState, DEFAULT_TARGET, FLOAT_RANGES, LimitError, MAX_CHARS
from ui.core.streamlit_internals import forget_stale_widgets
from ui.stores import models

DEPTH_FIELDS = ("n_enc_layers", "n_dec_layers")  # Config.depth
SIZE_FIELDS = ("d_model", "n_heads", "d_k", "d_v", "d_ff") + DEPTH_FIELDS
CHOICE_FIELDS = ("layer_norm", "norm_placement", "pos_encoding", "activation", "softmax")
BOOL_FIELDS = ("embed_scale", "attn_bias", "ffn_bias", "shared_embeddings", "tied_output", "decoder_only",
               "residual")
WIDGET_FIELDS = SIZE_FIELDS + CHOICE_FIELDS + BOOL_FIELDS + ("eps", "attn_divisor", "n_layers")  # the options drawn
# session_state: the model's options were drawn last run (their widgets hold values)
OPTIONS_DRAWN = "ctl.options_drawn"
START_LABELS = {"sos": SOS, "pad": f"`{PAD}`"}  # Config.decoder_start's token in a label (code: not a tag)
TRANSLATOR = ":translator"  # the preset list's entry for a loaded translator: neither a preset's nor a model's name
# (ui/stores/models.NAME has no ":")


def start():
    """The state of this run before the controls are read: a session's first from its link, a pending model; and
    the translator of the language the controls ask for."""
    if not session_store.has(STATE):
        start_from_link()
    else:  # a link's view is for the page it opened, on its first run (ui/views/drawn.py), as is a presenter's move
        session_store.pop(LINK_VIEW)
        session_store.pop(WHOLE_VIEW)
        if session_store.has(PRESENT_VIEW):  # (ui/classroom/presenter.py)
            session_store.put(LINK_VIEW, session_store.pop(PRESENT_VIEW))
    pending = session_store.pop(ADOPT_PENDING)
    if pending is not None:
        adopt_model(pending["model"], pending["origin"], **pending["changes"])
    marian = session_store.pop(MARIAN_PENDING)
    if marian is not None:  # loaded by the box on the run before (_translator_box)
        adopt(_with_marian(session_store.get(STATE), marian))
    return translator(session_store.get("ctl.lang", session_store.get(STATE).lang))


def build(t, reading: bool = False, vision: bool = False) -> Context:
    """Read the controls (after `start`), build (or keep) the state, and remember the context for the page. reading:
    a following student's run (Context.reading), whose sidebar draws only the student's own controls; vision: a
    Vision Transformer's page, which draws its own model's controls: the sidebar has the reader's own and a line
    saying where the text model's are."""
    good: AppState = session_store.get(STATE)
    forget_stale_widgets()
    controls = _read_only_controls(good, t) if reading or vision else _controls(good, t)
    context = session.make_context(controls, good, t, st.sidebar, reading)
    if vision:
        st.sidebar.caption(t("ctl.text_model_elsewhere"))
        return context
    _describe_model(st.sidebar, context)
    if not reading:
        _translator_box(st.sidebar, t)
    if context.state.edits:
        st.sidebar.caption(t("ctl.edits"))
    if context.state.edits and not reading:
        st.sidebar.button(t("ctl.reset_edits"), key="ctl.reset_edits", on_click=lambda: set_state(
            session_store.get(STATE).without_edits()))
    return context


def adopt(new: AppState) -> None:
    """Switch to a whole other state from a callback; the sidebar's widgets follow it."""
    set_state(new)
    _sync_widgets(new)


def use_settings(changes: dict) -> None:
    """From a callback: some Config fields set (a step's paper form, say), as the sidebar's options would set them;
    trained or uploaded weights, which fit only their own settings, give way to the seed's random weights (and the
    edits made to them go too)."""
    state = session_store.get(STATE).with_settings(**changes)
    adopt(state.replace(weights="", model="", edits=()) if state.own_weights else state)


def adopt_model(model: engine.Model, origin: dict | None = None, **changes) -> None:
    """Make trained or uploaded weights the starting point of every page (from a callback), in place of a loaded
    translator too; origin: where they came from (ui.stores.weights.ORIGIN_FIELDS), which the sidebar says."""
    weights = runs.weights_store().put(model, origin)
    adopt(session_store.get(STATE).replace(edits=(), weights=weights, model="", **app_state.model_settings(model),
                                           **changes))


def adopt_model_later(model: engine.Model, origin: dict | None = None, **changes) -> None:
    """adopt_model from a page's body (after the sidebar's widgets exist): done at the start of the next run."""
    session_store.put(ADOPT_PENDING, {"model": model, "origin": origin, "changes": changes})


def start_from_link():
    """The state and view the link asks for, as a session's first run reads them (and a following student's run that
    took the teacher's link: ui/classroom/follow.py)."""
    query = st.query_params.to_dict()
    state, notes = app_state.decode(query, default_lang=language_of(st.context.locale))
    view, view_notes = app_state.decode_view(query)
    session_store.put(LINK_VIEW, view)
    notes += view_notes
    if state.weights and not isinstance(runs.weights_store().get(state.weights), engine.Model):  # or a ViT's
        notes.append(LimitError("msg.weights_gone", {"id": state.weights}))
        state = state.replace(weights="", edits=())
    if state.model:  # loaded from this process's models directory, once per process (runs.marian_model)
        try:
            state = _with_marian(state, state.model)
        except ValueError as error:
            notes.append(LimitError("msg.marian_gone", {"name": literal(state.model), "error": session.refusal(
                translator(state.lang), error)}))
            state = state.replace(model="", edits=())
    vit, gone = runs.vit_from_link(state.vit)
    state, notes = state.replace(vit=vit), notes + gone
    state, refused = app_state.fitted(state)  # a link's settings may be fine one by one and not fit together
    notes += refused
    try:  # the engine's own checks (a sentence longer than the model's max_len)
        app_state.check_limits(state)
        runs.run(state.model_key)
    except ValueError as error:
        notes.append(error)
        state = AppState(lang=state.lang, lang_chosen=state.lang_chosen)
    session_store.put(STATE, state)
    session_store.put(URL_NOTES, notes)
    _sync_widgets(state)


def _with_marian(state: AppState, name: str) -> AppState:
    """The state with a real translator's weights and settings (its Config as the paper preset's overrides); stored
    weights give way, and edits stay only while they are the same model's."""
    edits = state.edits if state.model == name else ()
    return state.replace(model=name, weights="", edits=edits, **runs.marian_settings(name))


def _translator_box(sidebar, t) -> None:
    """A box that loads a real translator by name, a folder of the models directory or a Hub id, for every page.
    Loaded in this run, under a spinner (seconds; 600 MB of memory for an opus-mt model), and taken by the state at
    the start of the next (MARIAN_PENDING): the sidebar's widgets are drawn already. A refusal says why, and the
    model in use stays."""
    directory = models.models_dir()
    box = sidebar.expander(t("marian.box"), icon=":material/translate:")
    box.caption(t("marian.help", names=", ".join(map(model_card.code, models.available(directory))) or "—"))
    form = box.form("ctl.marian_form", border=False)  # Enter loads, as the button does
    name = form.text_input(t("marian.name"), key="ctl.marian", max_chars=models.MAX_NAME,
                           placeholder="Helsinki-NLP/opus-mt-en-zh")
    if not form.form_submit_button(t("marian.load"), key="ctl.marian_load") or not name.strip():
        return
    try:
        with box, st.spinner(t("marian.loading", name=literal(name.strip()))):
            name = runs.load_marian(name)
    except ValueError as error:  # a marian ConfigError: what is wrong with the name, the folder or its files
        box.error(t("marian.refused", error=session.refusal(t, error)))
        return
    session_store.put(MARIAN_PENDING, name)
    st.rerun()


def _sync_widgets(state: AppState):
    """Put the state's values into the control widgets (at the start and after a preset change). The option
    widgets get theirs when they are drawn: a value kept for a widget not on the page is one more entry that
    Streamlit copies for every keyed widget of every rerun."""
    session_store.update({"ctl.lang": state.lang, "ctl.preset": _preset_choice(state), "ctl.src": state.src,
                             "ctl.tgt": state.tgt, "ctl.present": state.present})
    if session_store.get(OPTIONS_DRAWN):
        session_store.update(_option_values(state))


def _option_values(state: AppState) -> dict:
    """The option widgets' values for a state, by widget key."""
    config = state.config()
    values = {f"ctl.{field}": getattr(config, field) for field in SIZE_FIELDS + CHOICE_FIELDS + BOOL_FIELDS + ("eps",)}
    values |= {f"ctl.{field}": _widget_depths(config)[stack] for stack, field in DEPTHS.items()}
    values["ctl.seed"], values["ctl.digits"] = state.seed, state.digits
    values["ctl.divisor_kind"] = "sqrt" if config.attn_divisor == "sqrt_dk" else "number"
    values["ctl.divisor"] = 30.0 if config.attn_divisor == "sqrt_dk" else float(config.attn_divisor)
    return values


def _preset_choice(state: AppState) -> str:
    """What the preset list shows: the loaded translator, which is what runs (though its settings are the paper
    preset's with Marian's overrides), else the preset."""
    return TRANSLATOR if state.model else state.preset


def _preset_label(t, choice: str, model: str) -> str:
    return t("preset.translator", name=model) if choice == TRANSLATOR else t(f"preset.{choice}")


def _on_preset_change():
    choose_preset(session_store.widget("ctl.preset"))


def choose_preset(preset: str) -> None:
    """From a callback: a preset's model, as the sidebar's list chooses it (a stack page offers the paper's layers),
    with the sentences, the seed and the language kept."""
    if preset not in engine.PRESETS:  # only a forged message can name another
        return
    old = session_store.get(STATE)
    adopt(AppState(preset=preset, seed=old.seed, src=session_store.widget("ctl.src"),
                   tgt=session_store.widget("ctl.tgt"), lang=old.lang, lang_chosen=old.lang_chosen, gen=old.gen))


def whole_number_input(container, label: str, key: str, low: int, high: int, on_change=None, disabled=False, *,
                       value: int | None = None, step: int = 1, width="stretch") -> int:
    """A whole number (a size, a seed, a count), which it returns. A float input shown without decimals ("%g"):
    Streamlit 1.67's whole-number input raises on a forged NaN or inf (int() before its range check), where a float
    input puts its default back; every whole number of the app is one of these (tests/test_reliability.py finds them
    all). on_change runs after the value is made whole; value: the default (else session_state's or the least)."""
    default = {} if value is None else {"value": float(value)}
    return int(container.number_input(label, min_value=float(low), max_value=float(high), step=float(step),
                                      format="%g", key=key, on_change=_on_whole_number, args=(key, on_change),
                                      disabled=disabled, width=width, **default))


def _on_whole_number(key, then):
    """Drop a typed fraction (2.5 becomes 2), as a whole-number input does in the browser."""
    session_store.put(key, int(session_store.widget(key)))
    if then is not None:
        then()


def _on_heads_change():
    """Keep d_k = d_v = d_model / h when the sizes divide, as the paper does."""
    d_model, heads = session_store.widget("ctl.d_model"), session_store.widget("ctl.n_heads")
    if heads and d_model % heads == 0:
        session_store.update({"ctl.d_k": d_model // heads, "ctl.d_v": d_model // heads})


def _controls(good: AppState, t) -> AppState:
    """The state the sidebar's widgets ask for."""
    sidebar = st.sidebar
    _own_controls(t)
    choice = _preset_choice(good)  # a preset chosen unloads the translator (choose_preset)
    if session_store.get("ctl.preset") != choice:  # the options dropped a translator (_asked): its entry goes
        session_store.put("ctl.preset", choice)
    sidebar.selectbox(t("ctl.preset"), list(engine.PRESETS) + ([TRANSLATOR] if good.model else []),
                      format_func=lambda p: _preset_label(t, p, good.model), key="ctl.preset",
                      on_change=_on_preset_change)
    sidebar.text_input(t("ctl.src"), good.src, key="ctl.src", max_chars=MAX_CHARS)
    own = ".decoder_only" if _decoder_only(good) else ""  # whose decoder reads the source first
    start = START_LABELS[good.config().decoder_start]  # the token the decoder reads first
    sidebar.text_input(t(f"ctl.tgt{own}", start=start), good.tgt, key="ctl.tgt", max_chars=MAX_CHARS)
    sos_only = not split(session_store.widget("ctl.tgt"))  # the post's own decoder step
    button = ".translator" if good.model else own  # a translator's pieces: neither the post's step nor its 3 positions
    sidebar.button(t(("ctl.tgt_default" if sos_only else "ctl.tgt_sos") + button, target=DEFAULT_TARGET, start=start),
                   key="ctl.tgt_toggle", on_click=_set_target, args=(DEFAULT_TARGET if sos_only else "",))
    _offer_replaced_text(sidebar, t)
    options = sidebar.expander(t("ctl.options"), key="ctl.options", on_change="rerun")
    if options.open:  # the option widgets are drawn (and cost a rerun's time) only while they are shown
        if not session_store.get(OPTIONS_DRAWN):  # hidden widgets forget their values: give them back
            session_store.update(_option_values(good))
        with options:
            digits = int(st.slider(t("ctl.digits"), *DIGITS_RANGE, key="ctl.digits", help=t("ctl.digits_help")))
            overrides, seed = _option_widgets(good, t)  # digits: a forged 4.5, within the slider's range, is 4
    else:
        overrides, seed, digits = good.overrides, good.seed, good.digits
    session_store.put(OPTIONS_DRAWN, options.open)
    return _asked(good, digits, seed, overrides)


def _read_only_controls(good: AppState, t) -> AppState:
    """A following student's sidebar, and a ViT page's: the reader's own controls only (the language, presenter
    mode). The state is the teacher's, not the student's to edit (or the text model's, which the ViT's pages do not
    draw), and the widgets that edit it cost every run its time: they are not drawn, and are given the state's values
    for when they are again (after Follow off, on a text model's page)."""
    _own_controls(t)
    session_store.update({"ctl.preset": _preset_choice(good), "ctl.src": good.src, "ctl.tgt": good.tgt,
                             "ctl.options_drawn": False})  # the options' widgets take the state's when next drawn
    return _asked(good, good.digits, good.seed, good.overrides)


def _own_controls(t) -> None:
    """What the link said it could not show (url_notes), and each reader's own: the language, presenter mode."""
    sidebar = st.sidebar
    for note in session_store.pop(URL_NOTES, []):
        detail = session.refusal(t, note) if isinstance(note, ValueError) else literal(note)
        sidebar.warning(t("msg.url", detail=detail))
    sidebar.segmented_control(t("lang.label"), list(LANGUAGES), format_func=LANGUAGES.get, key="ctl.lang",
                              required=True)
    sidebar.toggle(t("ctl.present"), key="ctl.present", help=t("ctl.present_help"))


def _asked(good: AppState, digits: int, seed: int, overrides: tuple) -> AppState:
    """The state the sidebar's widgets ask for, from the good one."""
    same_model = (seed, overrides) == (good.seed, good.overrides)  # own weights fit only their own model
    lang = session_store.widget("ctl.lang") if session_store.widget("ctl.lang") in LANGUAGES else good.lang
    return good.replace(lang=lang, lang_chosen=good.lang_chosen or lang != good.lang, digits=digits,
                        src=session_store.widget("ctl.src"), present=session_store.widget("ctl.present") is True,
                        tgt=session_store.widget("ctl.tgt"), seed=seed, overrides=overrides,
                        weights=good.weights if same_model else "", model=good.model if same_model else "")


def _describe_model(sidebar, context: Context) -> None:
    """The model in use: its sizes, where its weights came from and, for weights the server holds, how long their
    link works, with a way back to the preset's weights (not on a following student's page: Context.reading)."""
    state, t, store = context.state, context.t, runs.weights_store()
    sidebar.caption(t("model.in_use_line", model=session.model_description(context)))
    if state.model and not context.reading:
        sidebar.button(t("ctl.drop_marian"), key="ctl.drop_marian", on_click=lambda: adopt(
            session_store.get(STATE).replace(model="", overrides=(), edits=())))
    if not state.weights:
        return
    if store.on_disk(state.weights):
        sidebar.caption(t("model.kept", id=state.weights, files=store.max_files, mb=store.max_bytes // 2**20))
    else:
        sidebar.caption(t("model.kept_memory", id=state.weights, n=store.memory))
    if not context.reading:
        sidebar.button(t("ctl.drop_weights"), key="ctl.drop_weights", on_click=lambda: set_state(
            session_store.get(STATE).replace(weights="", edits=())))


def _offer_replaced_text(sidebar, t) -> None:
    """While the sentences are the ones that replaced the learner's: say so, with a button to bring theirs back."""
    replaced = session_store.get(TEXT_REPLACED)
    if replaced is None:
        return
    if (session_store.widget("ctl.src"), session_store.widget("ctl.tgt")) != replaced["new"]:
        session_store.pop(TEXT_REPLACED)  # the learner has typed other sentences since
        return
    (src, tgt), (new_src, new_tgt) = (map(model_card.code, pair) for pair in (replaced["old"], replaced["new"]))
    sidebar.info(t("model.text_replaced", src=src, tgt=tgt, new_src=new_src, new_tgt=new_tgt))
    sidebar.button(t("model.text_restore"), key="ctl.restore_text", on_click=_restore_text)


def _decoder_only(good: AppState) -> bool:
    """Whether the model asked for is decoder-only: the option's toggle while it is drawn (newer than the state,
    which this run's widgets have not made yet), else the state's."""
    if session_store.get(OPTIONS_DRAWN) and session_store.has("ctl.decoder_only"):
        return session_store.widget("ctl.decoder_only") is True
    return good.config().decoder_only


def _restore_text():
    src, tgt = session_store.pop(TEXT_REPLACED)["old"]
    session_store.update({"ctl.src": src, "ctl.tgt": tgt})


def _set_target(text: str):
    session_store.put("ctl.tgt", text)


def _option_widgets(good: AppState, t) -> tuple:
    """The Config widgets; returns the fields that differ from the preset, as sorted pairs, and the seed."""
    st.caption(t("ctl.sizes"))
    left, right = st.columns(2)
    for i, field in enumerate(SIZE_FIELDS):
        label = t(f"ctl.{field}") if field in DEPTH_FIELDS else field  # the sizes are the paper's symbols
        whole_number_input(left if i % 2 == 0 else right, label, f"ctl.{field}", 1, APP_LIMITS[field],
                           on_change=_on_heads_change if field in ("d_model", "n_heads") else None,
                           disabled=field == "n_enc_layers" and session_store.widget("ctl.decoder_only"))  # no encoder
    whole_number_input(st, t("ctl.seed"), "ctl.seed", 0, 2**32 - 1)
    st.radio(t("ctl.divisor"), ["sqrt", "number"], format_func=lambda k: t(f"ctl.divisor.{k}"),
             key="ctl.divisor_kind", horizontal=True)
    if session_store.widget("ctl.divisor_kind") == "number":
        low, high = FLOAT_RANGES["attn_divisor"]
        st.number_input(t("ctl.divisor.value"), min_value=low, max_value=high, key="ctl.divisor")
    for field in CHOICE_FIELDS:
        st.selectbox(t(f"ctl.{field}"), CHOICES[field], format_func=lambda c: t(f"choice.{c}"), key=f"ctl.{field}")
    st.number_input(t("ctl.eps"), min_value=FLOAT_RANGES["eps"][0], max_value=FLOAT_RANGES["eps"][1], format="%.0e",
                    key="ctl.eps")
    decoder_only = session_store.widget("ctl.decoder_only")
    for field in BOOL_FIELDS:  # a decoder-only model has one embedding table: nothing to share
        shared = field == "shared_embeddings" and decoder_only
        st.toggle(t(f"ctl.{field}"), key=f"ctl.{field}", disabled=shared,
                  help=t("ctl.shared_embeddings.decoder_only") if shared else None)
    chosen = {f: session_store.widget(f"ctl.{f}") for f in CHOICE_FIELDS + BOOL_FIELDS + ("eps",)}
    chosen |= {f: int(session_store.widget(f"ctl.{f}")) for f in SIZE_FIELDS}  # a float after Streamlit resets one
    chosen |= _depth_settings(good.config(), chosen.pop("n_enc_layers"), chosen.pop("n_dec_layers"))
    chosen = {f: v for f, v in good.overrides if f not in WIDGET_FIELDS} | chosen  # settings no widget shows stay
    # (a real translator's decoder start, say)
    chosen["attn_divisor"] = "sqrt_dk" if session_store.widget("ctl.divisor_kind") == "sqrt" else float(
        session_store.widget("ctl.divisor"))
    base = engine.PRESETS[good.preset]
    overrides = tuple(sorted((f, v) for f, v in chosen.items() if getattr(base, f) != v))
    return overrides, int(session_store.widget("ctl.seed"))


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
