"""Presenter mode's part of a session as one value, `Presenting`, and the pure functions that change it (no Streamlit):
ui/classroom/presenter.py draws the rail and, from its callbacks and at the start of a page, loads the value
(ui/core/session_store.py), calls these and does what they return. tests/test_following.py drives them.

A key on the rail asks for a slide (`asked`), its exit leaves presenter mode (`exited`); the page's next run opens
the slide (`opened`): on the page whose rail was
drawn, its view for the page's widgets; on another, a switch to that page with the view.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple


class Open(NamedTuple):
    """What opening a slide asks: its view for this page's widgets (switch False), or a switch to its page."""
    page: str
    view: dict
    switch: bool


@dataclass(frozen=True)
class Presenting:
    on: str | None = None  # the page whose rail was drawn last
    move: tuple | None = None  # (page, view): the slide a key asked for, which the page's next run opens
    left: bool = False  # the rail's exit was pressed: the next run is the whole app's (the sidebar's toggle)


def drawn_on(presenting: Presenting, page: str) -> Presenting:
    return replace(presenting, on=page)


def asked(presenting: Presenting, slide: tuple) -> Presenting:
    """A slide (rail part, page, view) asked for by a key, a click or the overview's Start."""
    return replace(presenting, move=slide[1:])


def leaves_page(presenting: Presenting, slide: tuple) -> bool:
    """Whether opening the slide switches page (whose first run starts the sidebar's inputs empty)."""
    return slide[1] != presenting.on


def exited(presenting: Presenting) -> Presenting:
    return replace(presenting, left=True)


RERUN = "rerun"  # the whole app again


def opened(presenting: Presenting) -> tuple[Presenting, Open | str | None]:
    """At the start of a page: after the rail's exit, the whole app again (RERUN: the sidebar's toggle says presenter
    mode is off); else the slide asked for, opened; else nothing."""
    if presenting.left:
        return replace(presenting, left=False), RERUN
    if presenting.move is None:
        return presenting, None
    page, view = presenting.move
    return replace(presenting, move=None), Open(page, view, switch=page != presenting.on)
