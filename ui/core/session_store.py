"""Streamlit's session_state as the classroom reaches it (ui/classroom/): a session's typed objects, loaded and saved
whole (`load`, `put`), and the few loose values Streamlit itself keeps by key (a widget's value, a component's
message), read and written by their named keys (`get`, `put`, `pop`). A typed object's changes are pure functions
of its own module (ui/classroom/following.py); this is the one place that holds it between runs."""
from __future__ import annotations

from typing import TypeVar

import streamlit as st

STATE = "state"  # the AppState, the one truth of the model and its view (ui/core/session.py)
CONTEXT = "context"  # the run's session.Context
LINK_VIEW = "link_view"  # the view a page's widgets take on their next run (ui/views/drawn.py)

Typed = TypeVar("Typed")


def load(key: str, kind: type[Typed]) -> Typed:
    """The session's object of this kind, or a new one (kind's defaults)."""
    value = st.session_state.get(key)
    return value if isinstance(value, kind) else kind()


def has(key: str) -> bool:
    return key in st.session_state


def get(key: str, default=None):
    return st.session_state.get(key, default)


def put(key: str, value) -> None:
    st.session_state[key] = value


def pop(key: str, default=None):
    return st.session_state.pop(key, default)


def setdefault(key: str, default):
    return st.session_state.setdefault(key, default)
