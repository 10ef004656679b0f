"""A session's part of a room as one value, `Following`, and the pure functions that change it (no Streamlit): a
reducer's way, `(following, what happened) -> (following, what to do)`. ui/classroom/follow.py is the Streamlit
adapter: it loads the value once (ui/core/session_store.py), reads the store, calls these, stores the value back and
does what they return (rerun the app, take the teacher's link here, switch page). tests/test_following.py drives
every transition without Streamlit.

The teacher's session holds the room's key and puts its page and link into the room after each run (`published`).
A student's session holds the room's code only; while it follows, a look at the room that finds it moved takes the
teacher's page and link (`take`), and the run that took them ends by noting what its page shows (`run_ended`): the
next run that ends on another page or link is the student's own change, which turns following off (`wandered`).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple

from ui.stores.rooms import Latest

LINK_KEYS = ("room", "key", "follow")  # follow=0: a student who turned following off (a reload keeps it off)
OWN_KEYS = ("lang", "present", "done", "me")  # each participant's own: the language, presenter mode (the teacher's
# projector), the exercises answered (ui/lessons/exercise_views.py), a student's id for the class quiz's answers
GONE, WRONG_KEY = "room.gone", "room.wrong_key"  # the store's refusals that end a session's part in its room


class View(NamedTuple):
    """A page and its link's query, less the room's part and each participant's own (LINK_KEYS, OWN_KEYS)."""
    page: str | None
    query: dict


@dataclass(frozen=True)
class Following:
    """This session's room and what its page shows of it. Outside a room, code is None."""
    code: str | None = None  # the room
    key: str | None = None  # the teacher's key: this session is the room's teacher (a student's is None)
    refused: bool = False  # the link's key was refused: a student now, whose panel keeps saying so
    seen: int | None = None  # the room's version the page shows (a teacher's: of its last put); None: take it now
    detached: bool = False  # the student turned following off (its link says follow=0: a reload keeps it off)
    wandered: bool = False  # the student's own change turned following off: the next run says so, once
    took: View | None = None  # the teacher's page and link as last taken: what the run that took them must show
    just_took: bool = False  # this run took the teacher's: the view it ends on is the teacher's, not the student's
    shows: View | None = None  # what the page showed after it last took the teacher's (then each run's own)
    retook: int | None = None  # the version taken again once, after a browser's rerun replaced the run that took it
    page: str | None = None  # the page this run shows (the teacher's run puts it into the room)
    quiz_shown: tuple | None = None  # (number, state) of the room's question the page shows (classroom/quiz.py)
    me: str | None = None  # this student's id for its quiz answers, in its link: a reload or another process keeps it
    notes: tuple = ()  # what the sidebar says next: (catalog key, values) pairs

    @property
    def attached(self) -> bool:
        """A student following its room now: its page is drawn read-only and lean (Context.reading)."""
        return bool(self.code and not self.key and not self.detached)

    @property
    def link(self) -> dict:
        """The room's part of this session's link (session.write_link adds it to every address)."""
        if not self.code:
            return {}
        if self.key:
            return {"room": self.code, "key": self.key}
        return {"room": self.code} | ({"me": self.me} if self.me else {}) | ({"follow": "0"} if self.detached else {})


def shown_view(page: str | None, query: dict) -> View:
    """What a run shows: its page, and its link's query less the room's part and each participant's own."""
    return View(page, {key: value for key, value in query.items() if key not in LINK_KEYS + OWN_KEYS})


def noted(following: Following, notes) -> Following:
    """`following` with more notes for the sidebar."""
    return replace(following, notes=following.notes + tuple(notes))


def is_gone(notes) -> bool:
    return any(key == GONE for key, _ in notes)


def entered(following: Following, code: str | None, key: str | None = None, refused: bool = False) -> Following:
    """A room made this session's (a new one, a join, the link's; code None: none): following it from its latest."""
    return Following(code=code, key=key, refused=refused, page=following.page, quiz_shown=following.quiz_shown,
                     me=following.me, notes=following.notes)


def left(following: Following, notes=()) -> Following:
    """Out of the room (the student left, the teacher closed it, it is gone), with notes saying why."""
    return noted(entered(following, None), notes)


def from_link(code: str | None, key: str | None, key_valid: bool, follow: str | None, notes=(),
              me: str | None = None) -> Following:
    """A session's first run: the room its link names (code: checked live, else None), the teacher's key if it has
    one's form (the store checks it at the first put), else a refused key; a student's follow=0 stays detached; the
    student's id `me` (its link's, checked, else a new one) in whatever room it is in or joins."""
    if code is None:
        return Following(me=me, notes=tuple(notes))
    joined = Following(code=code, key=key if key_valid else None, refused=key is not None and not key_valid, me=me,
                       notes=tuple(notes))
    return replace(joined, detached=joined.key is None and follow == "0")


def toggled(following: Following, on: bool) -> Following:
    """The student's Follow toggle: off detaches; on takes the teacher's page now, even if it has not moved."""
    return replace(following, detached=not on, wandered=False, seen=None if on else following.seen)


def told(following: Following) -> Following:
    """The note that the student's own change turned following off has been shown."""
    return replace(following, wandered=False)


def behind(following: Following, version: int | None) -> bool:
    """Whether the room's version (None: unknown) is another than the one the page shows."""
    return version is not None and version != following.seen


def teachers_query(following: Following, latest: Latest, state) -> dict:
    """The teacher's link as this session's: with its room, and the student's own language (the one they chose,
    else their browser's) and presenter mode (only if they turned it on: a projector of their own)."""
    query = {**latest.query, **following.link}
    if state.lang_chosen:
        query["lang"] = state.lang
    if state.present:
        query["present"] = "1"
    return query


def take(following: Following, latest: Latest, state) -> tuple[Following, dict]:
    """The teacher's page and link taken: the page shows the room's version, and this run's view is the teacher's."""
    taken = replace(following, seen=latest.version, took=View(latest.page, latest.query), just_took=True)
    return taken, teachers_query(following, latest, state)


class Take(NamedTuple):
    """What a look at the room asks: the teacher's link `query`, in this run (here) or by a switch to `page`."""
    page: str
    query: dict
    here: bool


def look(following: Following, latest: Latest | None, state, pages, here_allowed: bool) -> tuple[Following,
                                                                                                   Take | None]:
    """A following student's look at the room that found it moved: its latest page and link (None: not read), taken
    if they name a page of `pages` (else the version stays to be taken on a later look); in this run if it may
    (before the state is built) and the page is the same, else by a switch of page."""
    if latest is None or latest.page not in pages:
        return following, None
    taken, query = take(following, latest, state)
    return taken, Take(latest.page, query, here_allowed and latest.page == following.page)


RERUN, NUDGE = "rerun", "nudge"  # what the adapter does: the whole app again; the watcher looks now


def run_ended(following: Following, shown: View) -> tuple[Following, str | None]:
    """At the end of a following student's run, the view it shows. After a run that took the teacher's: that view is
    the page's; if it is another than the one taken, the browser's rerun (asked before it heard of the switch, or of
    the new link) came first and replaced the run that took it: the room's version is taken again, once. After
    any other run, a view that changed is the student's own change: following is off, with a note (RERUN: the app
    runs again for the sidebar's toggle to say so)."""
    took, following = following.just_took, replace(following, just_took=False)
    if took and following.took != shown and following.retook != following.seen:
        return replace(following, retook=following.seen, seen=None), RERUN
    if took or following.shows is None:
        return replace(following, shows=shown), None
    if shown != following.shows:
        return replace(following, detached=True, wandered=True), RERUN
    return following, None


def published(following: Following, version: int | None, notes) -> tuple[Following, str | None]:
    """The teacher's put answered: the room's new version (NUDGE: the students of this process see it now), or a
    refusal: a key the room refuses makes this session a student (whose panel says so), a room gone leaves it with
    the note (RERUN: the sidebar shows the student's panel, or none)."""
    refused = [key for key, _ in notes if key in (WRONG_KEY, GONE)]
    if refused and refused[0] == WRONG_KEY:
        return entered(following, following.code, refused=True), RERUN
    if refused:
        return left(following, notes), RERUN
    if version is not None and version != following.seen:
        return replace(following, seen=version), NUDGE
    return following, None
