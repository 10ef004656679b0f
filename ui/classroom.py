"""Follow the teacher: a teacher's room, and students whose pages follow it (ui/rooms.py keeps the rooms).

app.py calls `join_from_link()` before the state is built (so the link's room= and key= stay in the address),
`sidebar(t, page)` before the page runs, and `publish()` after it; a step page's fragment publishes too (its own
reruns do not run app.py). The teacher's link holds room=CODE&key=SECRET and each of the teacher's runs puts the
page and its link into the room; a student's link holds room=CODE only. A student's page polls the room's version
once a second (st.fragment(run_every)) while attached and, when it moved, opens the teacher's page with the
teacher's link, as a fresh link would open (ui/context.py: _start_session). Detached, nothing follows.
"""
from __future__ import annotations

import sqlite3

import segno
import streamlit as st

from . import rooms
from .navigation import HOME, PAGES
from .rooms import RoomError
from .share import copy_link_button

ROOM = "room"  # session_state: this session's room: {"code", "key" (the teacher's, else None), "seen", "refused"}
LINK = "room.link"  # session_state: the room's part of this session's link, which context.write_link adds
PAGE = "room.page"  # session_state: the page this run shows, which publish() puts into the room
NOTES = "room.notes"
ATTACHED = "room.attached.{code}"  # the student's toggle, on (a new room's is new: on again)
LINK_KEYS = ("room", "key")
POLL_SECONDS = 1.0
RECONNECT_TIMER_SECONDS = 3600  # the timer of _copy_link_on_a_timer's fragment: one run an hour
ALL_PAGES = {page for pages in PAGES.values() for page in pages}
STORE_ERRORS = (sqlite3.Error, OSError)  # and redis.RedisError, added by _store_errors()


@st.cache_resource(show_spinner=False)
def store() -> rooms.Rooms:
    """The rooms of every session of this server, and of every process that shares the same file or Redis."""
    return rooms.from_environment()


@st.cache_resource(show_spinner=False)
def _store_errors() -> tuple:
    """What a store that does not answer raises (Redis's errors only when Redis is in use, so the package loads then)."""
    if isinstance(store(), rooms.RedisRooms):
        from redis import RedisError

        return STORE_ERRORS + (RedisError,)
    return STORE_ERRORS


def _ask(call, notes: list):
    """The store's answer, or None with a note when it refuses (RoomError) or does not answer."""
    try:
        return call()
    except RoomError as error:
        notes.append(error.args)
    except _store_errors():
        notes.append(("room.unreachable", {}))
    return None


def join_from_link() -> None:
    """On a session's first run: the room and key its link names, checked (a note says what was refused)."""
    if ROOM in st.session_state:
        return
    notes, room = [], {"code": None, "key": None, "seen": None}
    code_text, key = st.query_params.get("room"), st.query_params.get("key")
    if code_text is not None:
        code = _live_code(code_text, notes)
        if code is not None:
            room["code"] = code
            if key is not None and rooms.valid_key(key):
                room["key"] = key  # the store checks it at the first put
            elif key is not None:
                room["refused"] = True
    _enter(room)
    st.session_state[NOTES] = notes


def _live_code(text: str, notes: list) -> str | None:
    """The room code in text if it names a live room, else None with a note saying why."""
    code = rooms.normal_code(text)
    if code is None:
        notes.append(("room.bad_code", {"code": str(text)[:12], "alphabet": rooms.ALPHABET}))
        return None
    before = len(notes)
    if _ask(lambda: store().version(code), notes) is not None:
        return code
    if len(notes) == before:
        notes.append(("room.gone", {"code": code}))
    return None


def _enter(room: dict) -> None:
    """Make `room` this session's; "refused": a key the room refused, which the student's panel keeps saying."""
    st.session_state[ROOM] = {"refused": False} | room
    st.session_state[LINK] = {"room": room["code"], "key": room["key"]} if room["key"] else (
        {"room": room["code"]} if room["code"] else {})


def sidebar(t, page) -> None:
    """The room's part of the sidebar; a student's page that is behind the teacher's goes to it (st.switch_page)."""
    st.session_state[PAGE] = page.url_path if page.url_path in ALL_PAGES else HOME
    room = st.session_state[ROOM]
    for key, values in st.session_state.pop(NOTES, []):
        st.sidebar.warning(t(key, **values))
    following = False
    if room["key"]:
        _teacher_panel(t, room)
    elif room["code"]:
        following = _student_panel(t, room)
    else:
        _no_room(t)
    with st.sidebar:
        if following:  # a follower's poll is a timed fragment already
            copy_link_button(t)
        else:
            st.fragment(run_every=RECONNECT_TIMER_SECONDS)(_copy_link_on_a_timer)(t)


def _copy_link_on_a_timer(t) -> None:
    """The copy-link button, in a timed fragment (one run an hour, drawing the button alone: a fragment of its own
    would be two more messages on every run): a timed fragment makes the browser ask for a run of the whole page
    when its websocket reconnects.

    Streamlit's browser asks for that run only if the page has a timed fragment (its App.handleConnectionStateChanged
    expects to find its session again). A browser whose process died reconnects through nginx to another process
    (deploy/nginx.conf.template), to a new, empty session: that run rebuilds its view from its link and room, and
    the session's fragments, without which a step page's edit would be dropped (an unknown fragment's rerun is)."""
    copy_link_button(t)


def _no_room(t) -> None:
    """Open a room, or join one by its code: drawn only while the expander is open (widgets cost every rerun)."""
    panel = st.sidebar.expander(t("room.section"), key="room.panel", on_change="rerun")
    if panel.open:
        panel.button(t("room.open"), key="room.open", help=t("room.open_help"), on_click=_open_room)
        panel.text_input(t("room.join"), key="room.join", max_chars=2 * rooms.CODE_LENGTH, on_change=_join_typed)


def _open_room() -> None:
    notes = st.session_state.setdefault(NOTES, [])
    made = _ask(store().create, notes)
    if made is not None:
        _enter({"code": made[0], "key": made[1], "seen": None})


def _join_typed() -> None:
    code = _live_code(st.session_state["room.join"], st.session_state.setdefault(NOTES, []))
    if code is not None:
        _enter({"code": code, "key": None, "seen": None})


def _leave() -> None:
    _enter({"code": None, "key": None, "seen": None})


def _teacher_panel(t, room) -> None:
    """The code, big, and the QR code of the students' link, for the projector."""
    link = students_link(st.context.url or "", st.session_state[PAGE], room["code"])
    panel = st.sidebar.container(border=True)
    panel.markdown(t("room.teacher", code=room["code"]))
    panel.image(qr_png_uri(link), caption=t("room.scan"), width="stretch")
    panel.code(link, language=None, wrap_lines=True)  # text, never markup: the host is what the browser sent
    panel.caption(t("room.teacher_note"))
    panel.button(t("room.leave"), key="room.leave", on_click=_leave)


def _student_panel(t, room) -> bool:
    """The student's panel; whether the student follows the teacher (then a fragment polls the room)."""
    panel = st.sidebar.container(border=True)
    key = ATTACHED.format(code=room["code"])
    attached = panel.toggle(t("room.follow", code=room["code"]), value=True, key=key, on_change=_reattach, args=(key,))
    if not attached:
        panel.caption(t("room.detached", code=room["code"]))
    if room["refused"]:
        panel.warning(t("room.wrong_key", code=room["code"]))
    panel.button(t("room.leave"), key="room.leave", on_click=_leave)
    if attached:
        with panel:
            st.fragment(run_every=POLL_SECONDS)(_follow)()
    return attached


def _reattach(key) -> None:
    if st.session_state[key]:
        st.session_state[ROOM]["seen"] = None  # the teacher's page now, even if it has not changed since


def _follow() -> None:
    """A student's poll: one small read of the room's version; when it moved, the teacher's page and link."""
    room, notes = st.session_state[ROOM], []
    version = _ask(lambda: store().version(room["code"]), notes)
    if version is None and not notes:  # the room expired
        st.session_state[NOTES] = [("room.gone", {"code": room["code"]})]
        _leave()
        st.rerun(scope="app")
    if version is None or version == room["seen"]:
        t = st.session_state["context"].t
        for key, values in notes or [("room.following", {})]:  # a store that does not answer: asked again in 1 s
            st.caption(t(key, **values))
        return
    latest = _ask(lambda: store().latest(room["code"]), notes)
    room["seen"] = version
    if latest is None or latest.page not in ALL_PAGES:
        return
    state = st.session_state.pop("state")  # the next run reads the teacher's link as a fresh session does
    query = {**latest.query, **st.session_state[LINK]}
    if state.lang_chosen:  # each student keeps the language they chose, else their browser's
        query["lang"] = state.lang
    from . import context  # imported here: context imports this module

    st.switch_page(context.page_entry(st.session_state["context"].t, latest.page), query_params=query)


def publish(t) -> None:
    """The teacher's page and link into the room (a student's session has no key, and puts nothing). A key the room
    refuses, or a room that expired, makes this session leave the room as its teacher, with a note."""
    room = st.session_state.get(ROOM)
    if not room or not room["key"]:
        return
    query = {key: value for key, value in st.query_params.to_dict().items() if key not in LINK_KEYS + ("lang",)}
    notes = []
    _ask(lambda: store().put(room["code"], room["key"], st.session_state[PAGE], query), notes)
    refused = [key for key, _ in notes if key in ("room.wrong_key", "room.gone")]
    if not refused:
        for key, values in notes:  # the store is down, or the state too big: the students keep the last one
            st.sidebar.warning(t(key, **values))
        return
    if refused[0] == "room.wrong_key":
        _enter({"code": room["code"], "key": None, "seen": None, "refused": True})
    else:
        st.session_state[NOTES] = notes
        _leave()
    st.rerun(scope="app")  # the sidebar shows the student's panel, or none


def students_link(url: str, page: str, code: str) -> str:
    """The app's address with room=CODE, from the teacher's address (st.context.url: this page's, without query)."""
    base = url.rstrip("/")
    if base.endswith(f"/{page}"):
        base = base[: -len(page) - 1]
    return f"{base}/?room={code}"


@st.cache_data(max_entries=32, show_spinner=False)
def qr_png_uri(link: str) -> str:
    """The link's QR code, a PNG in a data URI: it travels in the run's message. A media file would live in one process
    only, and a browser moved to another after its process died may ask for it again there, before its run (a 404)."""
    return segno.make(link, error="m").png_data_uri(scale=8, border=2)
