"""What the step page being drawn has drawn so far (its steps, intro, departures, view), and its link's view: what
the link asks a widget to show (`from_link`) and what the page's widgets show (`show_in_link`)."""
from __future__ import annotations

import contextlib
import contextvars

import streamlit as st

from ui.core import session_store
from ui.core.i18n import literal
from ui.core.session_store import LINK_VIEW, WHOLE_VIEW
from ui.core.state import encode_view


class _Drawn:
    """What a step page has drawn so far: the steps, and its intro, under which go its notes (the one on non-finite
    numbers is written once the page knows how far into the forward pass it went)."""

    def __init__(self):
        self.steps, self.compare = [], None  # steps: (trace, name); compare: view.compare's answer
        self.intro, self._notes = None, None  # the intro's element and its text; the notes' place, once made
        self.page = None  # the page's name, which its intro gives
        self.departures = set()  # the options whose departure from the paper the page has shown
        self.view = {}  # what the page shows, for its link (state.encode_view): only what is not the default
        self.shown = {}  # what the page shows, defaults too: presenter mode's place in the forward pass

    def note_nonfinite(self, ctx):
        bad = max((trace.nonfinite_through(name) for trace, name in self.steps), key=len, default=())
        if bad and self.intro is not None:
            self.notes().warning(ctx.t("msg.nonfinite", step=bad[0]))

    def notes(self):
        """The place for notes under the intro, made when the first note comes: the intro's element becomes a
        container holding the intro again (most reruns have no note, and send one element less)."""
        if self._notes is None:
            element, text = self.intro
            self._notes = element.container()
            self._notes.markdown(text)
        return self._notes


_DRAWN = contextvars.ContextVar("drawn", default=None)  # the step page being drawn by this thread, if any


def current() -> _Drawn | None:
    """What the step page being drawn by this thread has drawn so far; None outside a step page."""
    return _DRAWN.get()


@contextlib.contextmanager
def recording():
    """A step page's body drawn inside: what it draws is recorded (and given) until it ends."""
    drawn = _Drawn()
    token = _DRAWN.set(drawn)
    try:
        yield drawn
    finally:
        _DRAWN.reset(token)


def from_link(t, part: str, fits, default=None) -> object | None:
    """What the page's link asks a widget to show (state.decode_view), on the page's first run, if it `fits`;
    else None, and the page says in the words of `t` (the translator) which part of its link it ignored. A link that
    holds the whole view (a followed teacher's, session_store.WHOLE_VIEW) and does not name the part asks for its
    `default`: the teacher's link leaves out a part that is back at its default, and the widget must go back too."""
    asked = session_store.get(LINK_VIEW, {})
    if part not in asked:
        return default if session_store.get(WHOLE_VIEW) else None
    value = asked.pop(part)
    if fits(value):
        return value
    link_note(t, part, value)
    return None


def restore_from_link(t, key: str, part: str, options, default: int = 0) -> None:
    """Give the widget `key` the option at the position the page's link names for `part`, if it has one there (the
    `default` position if the link holds the whole view)."""
    asked = from_link(t, part, lambda position: position < len(options), default)
    if asked is not None:
        session_store.put(key, options[asked])


def link_note(t, part, value):
    drawn = current()
    notes = drawn.notes() if drawn is not None and drawn.intro is not None else st
    notes.warning(t("msg.url", detail=literal(f"{part}={encode_view({part: value})[part]!r}")))


def show_in_link(part: str, value, default) -> None:
    """Put what a widget shows into the page's link, unless it is what the page shows by default."""
    drawn = current()
    if drawn is not None:
        drawn.shown[part] = value
    if drawn is not None and value != default:
        drawn.view[part] = value
