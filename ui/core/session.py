"""A session's context: the state (the one truth, session_store.STATE), the run it names and the translator,
which a page's entry or frame gets with `get()` and hands to the views it draws; the address bar that shows the
state; and the navigation's pages.

The sidebar (ui/core/sidebar.py) makes the context once per run of app.py; a step page's fragment, whose reruns
skip app.py, makes it here from a state its own widgets changed.
"""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

import engine
from ui.core import model_card, runs, session_store, state as app_state, streamlit_internals
from ui.core.i18n import plain_math
from ui.core.navigation import HOME, PAGES, page_file
from ui.core.session_store import CONTEXT, EDIT_VERSION, NAVIGATION, ROOM_LINK, STATE, TEXT_REPLACED
from ui.core.state import AppState, LimitError
from ui.core.state.vision import VisionState



@dataclass(frozen=True)
class Context:
    state: AppState
    base: engine.Model  # the preset's model, before the user's edits
    model: engine.Model
    trace: engine.Trace
    t: object  # the translator: t(key, **values) -> str
    reading: bool = False  # a following student's page: drawn read-only and lean (nothing to edit, pick or open)
    vision: bool = False  # a Vision Transformer's page: model, base and trace are the ViT's (state.vit)

    @property
    def config(self) -> engine.Config:
        return self.model.config

    @property
    def step_in_view(self) -> bool:
        """Whether the page scrolls to the step it shows (ui/classroom/scroll.py): a presenter's slide, a following
        student's page; its step headings are drawn then."""
        return self.state.present or self.reading

    @property
    def edits(self) -> tuple:
        """The weights the learner typed into the model this page draws."""
        return self.state.vit.edits if self.vision else self.state.edits

    def with_edit(self, state: AppState, param: str, index: tuple, value: float) -> AppState:
        """`state` with a weight of this page's model typed."""
        if self.vision:
            return state.replace(vit=state.vit.with_edit(param, index, value))
        return state.with_edit(param, index, value)

    def without_edits(self, state: AppState, param: str | None = None) -> AppState:
        """`state` without the typed weights of this page's model (of one parameter, or all)."""
        if self.vision:
            return state.replace(vit=state.vit.without_edits(param))
        return state.without_edits(param)


def make_context(candidate: AppState, good: AppState, t, notes, reading: bool = False) -> Context:
    """The context of a candidate state, or of the last good one (with a message in `notes`) if it is refused;
    reading: the page is a following student's (Context.reading)."""
    try:
        app_state.check_limits(candidate)
        base, model, trace, dropped = runs.run(candidate.model_key)
    except ValueError as error:  # the app's limits (LimitError) or the engine's
        notes.error(t("msg.kept", error=refusal(t, error)))
        candidate = good
        base, model, trace, dropped = runs.run(good.model_key)
    session_store.put(STATE, candidate)
    write_link(candidate)
    if dropped:
        notes.warning(t("msg.edits_dropped", n=dropped))
    context = Context(candidate, base, model, trace, t, reading)
    session_store.put(CONTEXT, context)
    return context


def make_vision_context(candidate: AppState, good: AppState, t, notes, reading: bool = False) -> Context:
    """A Vision Transformer page's context (runs.run_vit of state.vit), or the last good state's with a message in
    `notes` if the candidate is refused."""
    try:
        base, model, trace, dropped = runs.run_vit(candidate.vit)
    except ValueError as error:  # the engine's (a pixel, a size) or weights the store no longer holds
        notes.error(t("msg.kept", error=refusal(t, error)))
        candidate = candidate.replace(vit=good.vit if good.vit != candidate.vit else VisionState())
        base, model, trace, dropped = runs.run_vit(candidate.vit)
    if dropped:  # dropped from the state and the link too, as the message says
        notes.warning(t("msg.edits_dropped", n=dropped))
        fitting = app_state.fitting_edits(base.params, candidate.vit.edits)
        candidate = candidate.replace(vit=candidate.vit.replace(edits=fitting))
    session_store.put(STATE, candidate)
    write_link(candidate)
    context = Context(candidate, base, model, trace, t, reading, vision=True)
    session_store.put(CONTEXT, context)
    return context


def use_vision(vision: bool) -> Context:
    """The page's context for the model its page draws: the Vision Transformer's on its pages (vision=True), which
    they call first; the text model's, which app.py's sidebar made, elsewhere."""
    context = get()
    if context.vision != vision:
        make = make_vision_context if vision else make_context
        context = make(context.state, context.state, context.t, st, context.reading)
    return context


def write_link(state: AppState, view: dict | None = None) -> None:
    """The address bar: the state, then the view of the page (view=None keeps the one it holds: a step page writes
    its own when it has been drawn; a switch to another page clears it in the browser), then the session's room
    (ROOM_LINK)."""
    current = {key: st.query_params.get_all(key) for key in st.query_params}
    query = app_state.encode(state)
    if view is None:
        query |= {key: current[key][-1] for key in app_state.VIEW_KEYS if current.get(key)}
    else:
        query |= app_state.encode_view(view)
    query |= session_store.get(ROOM_LINK, {})
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
    else:  # a refusal the engine gives no code: its English sentence is not shown on a Chinese screen
        key, values = "msg.refused", {}
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
    key = NAVIGATION.format(lang=t.lang)
    if not session_store.has(key):
        entries = {page: _entries(t, page) for pages in PAGES.values() for page in pages}
        session_store.put(key, ({t(f"section.{section}"): [entry for page in pages for entry in entries[page]]
                                 for section, pages in PAGES.items()}, {page: e[0] for page, e in entries.items()}))
    return session_store.get(key)


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
    context = session_store.get(CONTEXT)
    state = session_store.get(STATE)
    if state is not context.state:
        if not same_sidebar(context.state, state):
            st.rerun(scope="app")
        make = make_vision_context if context.vision else make_context
        context = make(state, context.state, context.t, st, context.reading)
    return context


def same_sidebar(old: AppState, new: AppState) -> bool:
    """Whether the sidebar drawn for state `old` holds for `new`: it shows the model in use and whether weights are
    edited (else a run of the fragment alone that changes the state must run the whole app)."""
    return bool(old.edits) == bool(new.edits) and _model_settings(old) == _model_settings(new)


def _model_settings(state: AppState) -> tuple:
    return state.preset, state.seed, state.overrides, state.weights, state.model


def set_state(new: AppState, reset_editors: bool = True) -> None:
    """Replace the state; reset_editors redraws the weight editors from the model (after a reset, a preset
    change or a refused value), instead of keeping what was typed into them."""
    session_store.put(STATE, new)
    if reset_editors:
        session_store.put(EDIT_VERSION, session_store.get(EDIT_VERSION, 0) + 1)


def model_description(context: Context) -> str:
    """The model in use, in a sentence or two: its sizes and where its weights came from."""
    state = context.state
    return model_card.describe(context.t, state.preset, state.seed, context.config, weights_origin(state),
                               state.own_weights)


def weights_origin(state: AppState) -> dict | None:
    """Where the server's weights the state names came from (ui.stores.weights, or a real translator's folder), or
    None: the preset's."""
    if state.model:
        return model_card.translator_origin(state.model, runs.marian_model(state.model)[0])
    return runs.weights_store().origin(state.weights) if state.weights else None


def keep_text_until_restored(src: str, tgt: str) -> None:
    """Before a sentence pair replaces the learner's (after training): keep theirs, which the sidebar offers back."""
    state = session_store.get(STATE)
    if (state.src, state.tgt) != (src, tgt):
        session_store.put(TEXT_REPLACED, {"old": (state.src, state.tgt), "new": (src, tgt)})
