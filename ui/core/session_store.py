"""Streamlit's session_state, the one module that touches it: what a session keeps between its runs.

- A session's typed objects, loaded and saved whole (`load`, `put`): the AppState (STATE, ui/core/session.py), the
  room followed (ui/classroom/follow.py), the presenter's (ui/classroom/presenter.py). A typed object's changes are
  pure functions of its own module; this is the one place that holds it between runs.
- The loose values a session keeps by key (`get`, `put`, `pop`, `has`, `setdefault`, `update`): the app-wide ones
  named below, and a module's own transient flags, errors and caches named by constants at the top of that module.
- Widgets own their keys: Streamlit keeps a keyed widget's value in session_state under the key the widget was drawn
  with, and a callback or a later run reads it (`widget`) or sets it (`put`, `update`) there; the key is named where
  the widget is drawn. This module is the one place that reads and writes them.

tests/test_engine_imports.py (test_session_state_is_reached_through_the_store_alone) fails if `session_state`
appears in another module of the app.
"""
from __future__ import annotations

from typing import Iterator, TypeVar

import streamlit as st

STATE = "state"  # the AppState, the one truth of the model and its view (ui/core/session.py)
CONTEXT = "context"  # the run's session.Context
NAVIGATION = "navigation.{lang}"  # the navigation's pages in a language, made once per session (ui/core/session.py)
LINK_VIEW = "link_view"  # the view a page's widgets take on their next run (ui/views/drawn.py)
WHOLE_VIEW = "link_view.whole"  # the link's view (ui/views/drawn.py) is the whole view (a followed teacher's): a part
# it does not name is at its default, not at what the widget showed before
PRESENT_VIEW = "present.view"  # the view a presenter's switch to a slide's page hands to that page's widgets
ROOM_LINK = "room.link"  # the room's part of this session's link (ui/classroom/follow.py)
URL_NOTES = "url_notes"  # what the link asked that was refused, said once by the sidebar (ui/core/sidebar.py)
ADOPT_PENDING = "adopt_pending"  # a model a page's body adopts at the start of the next run (sidebar.adopt_model_later)
MARIAN_PENDING = "marian_pending"  # a real translator's name, loaded, which the next run's state takes (sidebar.py)
TEXT_REPLACED = "text.replaced"  # the learner's sentences a trained model's replaced, offered back (ui/core/sidebar.py)
# the weight editors' generation: a new one redraws them from the model (session.set_state)
EDIT_VERSION = "edit_version"
EDIT_ERROR = "edit_error"  # why the weight typed last was refused, shown once on the next run (ui/views/editors.py)
EDITOR_FRAMES = "editor_frames"  # each weight editor's table, as it was drawn (ui/views/editors.py)

Typed = TypeVar("Typed")


def load(key: str, kind: type[Typed]) -> Typed:
    """The session's object of this kind, or a new one (kind's defaults)."""
    value = st.session_state.get(key)
    return value if isinstance(value, kind) else kind()


def has(key: str) -> bool:
    return key in st.session_state


def get(key: str, default=None):
    return st.session_state.get(key, default)


def widget(key: str):
    """A keyed widget's value (or a value a run keeps under a key it set); KeyError if the session holds none."""
    return st.session_state[key]


def keys() -> Iterator[str]:
    return iter(list(st.session_state))


def put(key: str, value) -> None:
    st.session_state[key] = value


def update(values: dict) -> None:
    st.session_state.update(values)


def pop(key: str, default=None):
    return st.session_state.pop(key, default)


def setdefault(key: str, default):
    return st.session_state.setdefault(key, default)
