"""Follow the teacher: a teacher's room, and students whose pages follow it (ui/stores/rooms.py keeps the rooms).

app.py calls `join_from_link()` before the state is built (so the link's room= and key= stay in the address),
`sidebar(t, page, slot)` before the page runs, and `publish()` after it; a step page's fragment publishes too (its own
reruns do not run app.py). The teacher's link holds room=CODE&key=SECRET and each of the teacher's runs puts the
page and its link into the room; a student's link holds room=CODE only. While a student is attached, the process's
room watcher (ui/classroom/room_watch.py: one read of the room a few times a second for all its students) reruns
the student's page when the room moves, and `catch_up()`, which app.py calls before the state is built, opens the
teacher's page with the teacher's link, as a fresh link would open (ui/core/sidebar.py: start_from_link). Where waking
a page needs Streamlit internals that are off (ui/core/streamlit_internals.py), a fragment of the sidebar polls the
room once a second instead (st.fragment(run_every)). Detached, nothing follows.

A following student's page is drawn read-only and lean (`following()`, ui/core/session.py: Context.reading): each
change of the teacher costs a run of it per student. On a step page the watcher reruns the page's fragment alone,
which takes the teacher's link itself (`catch_up_on_page`) when the teacher is on the same page with the same model,
without app.py, the sidebar and the navigation; else the whole app runs.

A following student's own change (another page, or a widget a page that is not a step page still draws) turns
following off, with a note: `publish()` compares the page and link a student's run ends on with those it showed after it last took the
teacher's. A detached student's link holds follow=0, so a reload stays detached.
"""
from __future__ import annotations

import sqlite3

import segno
import streamlit as st

from ui.classroom import room_watch, scroll
from ui.classroom.share import copy_link_button
from ui.core import session, sidebar as controls, streamlit_internals
from ui.core.i18n import language_of, literal
from ui.core.navigation import HOME, PAGES
from ui.core.session import ROOM_LINK, WHOLE_VIEW, page_entry
from ui.core.state import AppState, decode
from ui.stores import rooms
from ui.stores.rooms import RoomError

# session_state: this session's room: {"code", "key" (the teacher's, else None), "seen" (the room's version its page
# shows; a teacher's: the version of its last put), "refused"}
ROOM = "room"
PAGE = "room.page"  # session_state: the page this run shows, which publish() puts into the room
NOTES = "room.notes"
ATTACHED = "room.attached.{code}"  # the student's toggle, on (a new room's is new: on again)
TOOK = "room.took"  # session_state: this session took the teacher's link; the page it shows next is the teacher's
WANDERED = "room.wandered"  # session_state: a following student changed its own page: the toggle turns off, with a note
QUIZ_SHOWN = "quiz.shown"  # session_state: (number, state) of the room's question the page shows (classroom/quiz.py)
LINK_KEYS = ("room", "key", "follow")  # follow=0: a student who turned following off (a reload keeps it off)
OWN_KEYS = ("lang", "present", "done")  # each participant's own: the language, presenter mode (the teacher's
# projector), the exercises answered (ui/lessons/exercise_views.py)
POLL_SECONDS = 1.0  # a student's page asks the room this often when the watcher cannot wake it
RECONNECT_TIMER_SECONDS = 3600  # the timer of _copy_link_on_a_timer's fragment: one run an hour
ALL_PAGES = {page for pages in PAGES.values() for page in pages}
JOIN_QR_PX = 200  # the overview's QR code of a room: 16 % of a projected 1280-px screen, with the code, Start
# and the caption above presenter mode's rail
STORE_ERRORS = (sqlite3.Error, OSError)  # and redis.RedisError, added by _store_errors()
_page_fragments: dict[str, str] = {}  # session id -> the fragment of the step page a following student shows


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


@st.cache_resource(show_spinner=False)
def watcher() -> room_watch.Watcher:
    """The watcher that wakes this process's students (its thread reads the store: a store error is a None)."""
    rooms_store, errors = store(), _store_errors()

    def version(code):
        try:
            return rooms_store.version(code)
        except errors:
            return None

    def wake(session_id):  # the step page's fragment alone if it has one (catch_up_on_page), else the whole page
        woken = streamlit_internals.rerun_session(session_id, _page_fragments.get(session_id))
        if not woken:
            _page_fragments.pop(session_id, None)
        return woken
    return room_watch.Watcher(version, wake)


def from_store(call, notes: list):
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
    if room["code"] and not room["key"] and st.query_params.get("follow") == "0":  # a detached student's reload
        st.session_state[ATTACHED.format(code=room["code"])] = False
        _link_following(False)
    st.session_state[NOTES] = notes


def _live_code(text: str, notes: list) -> str | None:
    """The room code in text if it names a live room, else None with a note saying why."""
    code = rooms.normal_code(text)
    if code is None:
        notes.append(("room.bad_code", {"code": literal(str(text)[:12]), "alphabet": rooms.ALPHABET}))
        return None
    before = len(notes)
    if from_store(lambda: store().version(code), notes) is not None:
        return code
    if len(notes) == before:
        notes.append(("room.gone", {"code": code}))
    return None


def _enter(room: dict) -> None:
    """Make `room` this session's; "refused": a key the room refused, which the student's panel keeps saying."""
    st.session_state[ROOM] = {"refused": False} | room
    st.session_state[ROOM_LINK] = {"room": room["code"], "key": room["key"]} if room["key"] else (
        {"room": room["code"]} if room["code"] else {})


def _link_following(on: bool) -> None:
    """A student's link says follow=0 while following is off (a reload keeps it off)."""
    link = {key: value for key, value in st.session_state[ROOM_LINK].items() if key != "follow"}
    st.session_state[ROOM_LINK] = link if on else link | {"follow": "0"}


def following() -> bool:
    """Whether this session is a student following its room now: its page is drawn read-only and lean
    (ui/core/session.py: Context.reading)."""
    return _attached(st.session_state.get(ROOM))


def _attached(room: dict) -> bool:
    """Whether this session is a student following its room now."""
    return bool(room and room["code"] and not room["key"] and WANDERED not in st.session_state
                and st.session_state.get(ATTACHED.format(code=room["code"]), True))


def sidebar(t, page, slot) -> None:
    """The room's part of the sidebar, drawn in `slot` (at its top: a teacher opens a room in one click, a student sees
    the Follow switch first); a student's page that is behind the teacher's goes to it (st.switch_page)."""
    st.session_state[PAGE] = page.url_path if page.url_path in ALL_PAGES else HOME
    room = st.session_state[ROOM]
    session = streamlit_internals.this_session()
    if session is not None:  # woken again only if the student's panel below says so
        watcher().forget(session)
        _page_fragments.pop(session, None)  # and its page's fragment alone only if the page says so
    for key, values in st.session_state.pop(NOTES, []):
        slot.warning(t(key, **values))
    polling = False
    if room["key"]:
        _teacher_panel(t, room, slot)
    elif room["code"]:
        polling = _student_panel(t, room, slot)
    else:
        _no_room(t, slot)
    with st.sidebar:
        if polling:  # a follower's poll is a timed fragment already
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


def _no_room(t, slot) -> None:
    """Open a room (one click), or join one by its code: its field drawn only while its expander is open (widgets
    cost every rerun)."""
    open_room_button(t, slot, "room.open")
    panel = slot.expander(t("room.section"), key="room.panel", on_change="rerun")
    if panel.open:
        panel.text_input(t("room.join"), key="room.join", max_chars=2 * rooms.CODE_LENGTH, on_change=_join_typed)


def open_room_button(t, where, key: str, width="stretch") -> None:
    """"Open a room", one click: at the sidebar's top, and on the overview, where a class starts (the sidebar's
    navigation fills a projector's first screen)."""
    where.button(t("room.open"), key=key, help=t("room.open_help"), on_click=_open_room, width=width,
                 icon=":material/groups:")


def in_room() -> bool:
    """Whether this session is in a room, as its teacher or a student."""
    return bool(st.session_state.get(ROOM, {}).get("code"))


def _open_room() -> None:
    notes = st.session_state.setdefault(NOTES, [])
    made = from_store(store().create, notes)
    if made is not None:
        _enter({"code": made[0], "key": made[1], "seen": None})


def _join_typed() -> None:
    code = _live_code(st.session_state["room.join"], st.session_state.setdefault(NOTES, []))
    if code is not None:
        _enter({"code": code, "key": None, "seen": None})


def _leave() -> None:
    _enter({"code": None, "key": None, "seen": None})


def _teacher_panel(t, room, slot) -> None:
    """The QR code of the students' link and the room's code, big, for the projector; the code under the QR code,
    which its fullscreen button (over the image's top right corner, shown on hover) would otherwise cover."""
    link = _students_link(room)
    panel = slot.container(border=True)
    panel.image(qr_png_uri(link), caption=t("room.scan"), width="stretch")
    _code_and_link(t, panel, room, link)
    panel.caption(t("room.teacher_note"))
    panel.button(t("room.leave"), key="room.leave", on_click=_close_room)


def join_card(t, where):
    """How students join, in the main area (where a class starts: the overview), for the room's teacher: the
    sidebar's panel sits under its navigation, below a 720-px projector's first screen. The QR code beside the
    code, big, and the link, in a row that may take more (the card), or None for a student or outside a room."""
    room = st.session_state.get(ROOM) or {}
    if not room.get("key"):
        return None
    link = _students_link(room)
    card = where.container(border=True, horizontal=True, vertical_alignment="center", gap="large", key="room.card")
    card.image(qr_png_uri(link), caption=t("room.scan_or_link"), width=JOIN_QR_PX)
    _code_and_link(t, card.container(), room, link)
    return card


def _students_link(room: dict) -> str:
    return students_link(st.context.url or "", st.session_state[PAGE], room["code"])


def _code_and_link(t, where, room: dict, link: str) -> None:
    where.caption(t("room.code"))
    where.latex(code_tex(room["code"]))
    where.code(link, language=None, wrap_lines=True)  # text, never markup: the host is what the browser sent


def _close_room() -> None:
    """The teacher leaves: the room ends, and each student's next look at it says so (room.gone)."""
    room, notes = st.session_state[ROOM], st.session_state.setdefault(NOTES, [])
    from_store(lambda: store().close(room["code"], room["key"]), notes)
    watcher().nudge()
    _leave()


def _student_panel(t, room, slot) -> bool:
    """The student's panel; whether it holds a timed fragment: the poll of the room, where no watcher can wake the
    page (ui/classroom/room_watch.py)."""
    panel = slot.container(border=True)
    key = ATTACHED.format(code=room["code"])
    if st.session_state.pop(WANDERED, False):  # the student's own change (publish): following is off, and it says so
        st.session_state[key] = False
        st.warning(t("room.wandered"), icon=":material/link_off:")  # above the page, where the student looks
        scroll.to_top(st.session_state[PAGE])
    attached = panel.toggle(t("room.follow", code=room["code"]), value=True, key=key, on_change=_reattach, args=(key,))
    panel.caption(t("room.following") if attached else t("room.detached", code=room["code"]))
    if room["refused"]:
        panel.warning(t("room.wrong_key", code=room["code"]))
    panel.button(t("room.leave"), key="room.leave", on_click=_leave)
    session = streamlit_internals.this_session()
    if attached and session is None:  # no watcher: the page asks the room itself
        with panel:
            st.fragment(run_every=POLL_SECONDS)(_follow)()
        return True
    if attached:
        if room["seen"] is None:  # the first run: the teacher's page now (later runs catch up before the page)
            with panel:
                _follow()
        watcher().follow(session, room["code"], room["seen"])
    return False


def _reattach(key) -> None:
    _link_following(st.session_state[key])
    if st.session_state[key]:
        st.session_state[ROOM]["seen"] = None  # the teacher's page now, even if it has not changed since


def catch_up() -> None:
    """Before the state is built: a following student's page that is behind the room takes the teacher's page and
    link, in this run if the page is the same, else by st.switch_page. The watcher wakes such a run when the room
    moves; a student's own runs catch up too."""
    room = st.session_state.get(ROOM)
    if not _attached(room) or "state" not in st.session_state:
        return
    notes = st.session_state.setdefault(NOTES, [])
    latest = _moved(room, notes)
    if any(key == "room.gone" for key, _ in notes):
        _leave()
    elif latest is not None:
        _take(latest, switch=latest.page != st.session_state.get(PAGE))


def catch_up_on_page() -> None:
    """At the start of a step page's fragment. A following student's page names the fragment for the watcher to
    rerun alone; in such a run (no app.py, sidebar or navigation: about half the cost), the teacher's link is taken
    here, if the teacher is on this page and the sidebar holds (ui/core/session.py: same_sidebar). Else the whole app
    runs, whose catch_up() takes it. The page reports back to the watcher."""
    room, session_id = st.session_state.get(ROOM), streamlit_internals.this_session()
    if session_id is None or not _attached(room):
        return
    _page_fragments[session_id] = streamlit_internals.this_fragment()
    if not streamlit_internals.fragment_run():
        return
    latest = from_store(lambda: store().latest(room["code"]), [])
    if latest is None or latest.version != room["seen"]:
        query = None if latest is None else _teachers_query(latest, st.session_state["state"])
        taken = query and latest.page == st.session_state.get(PAGE) and session.same_sidebar(
            st.session_state["state"], _state_of(query))
        if not taken or _quiz_moved(room["code"]):  # a room gone, a store that does not answer, another page or
            st.rerun(scope="app")  # model, or the class quiz's question asked, closed or revealed: the whole app
        room["seen"] = latest.version
        _take_here(query, latest)
        controls.start_from_link()
    watcher().follow(session_id, room["code"], room["seen"])


def _quiz_moved(code: str) -> bool:
    """Whether the room's question is another, or in another state, than the one the page shows (drawn above the
    page, outside a step page's fragment)."""
    quiz = from_store(lambda: store().quiz(code), [])
    return (None if quiz is None else (quiz.number, quiz.state)) != st.session_state.get(QUIZ_SHOWN)


def _state_of(query: dict) -> AppState:
    return decode(query, default_lang=language_of(st.context.locale))[0]


def _follow() -> None:
    """A student's look at the room from the sidebar: on the first run, and every second (a timed fragment) where no
    watcher wakes the page."""
    notes = []
    latest = _moved(st.session_state[ROOM], notes)
    if any(key == "room.gone" for key, _ in notes):
        st.session_state[NOTES] = notes
        _leave()
        st.rerun(scope="app")
    t = st.session_state["context"].t
    for key, values in notes:  # a store that does not answer: asked again soon
        st.caption(t(key, **values))
    if latest is not None:
        _take(latest, switch=True)


def _moved(room: dict, notes: list) -> rooms.Latest | None:
    """One small read of the room's version; if it moved from the one this page shows, the teacher's page and link
    (and the page now shows that version). A room gone or a store that does not answer: None, with a note."""
    version = from_store(lambda: store().version(room["code"]), notes)
    if version is None and not notes:  # the room expired
        notes.append(("room.gone", {"code": room["code"]}))
    if version is None or version == room["seen"]:
        return None
    latest = from_store(lambda: store().latest(room["code"]), notes)
    if latest is None or latest.page not in ALL_PAGES:  # not taken: the version stays to be taken on a later run
        return None
    room["seen"] = version
    return latest


def _take(latest: rooms.Latest, switch: bool) -> None:
    """The teacher's link as this session's, read as a fresh session reads its link: in this run (before the state
    is built) or, on another page, by st.switch_page."""
    query = _teachers_query(latest, st.session_state["state"])
    if not switch:
        _take_here(query, latest)
        return
    _took(latest)
    st.switch_page(page_entry(st.session_state["context"].t, latest.page), query_params=query)


def _teachers_query(latest: rooms.Latest, state: AppState) -> dict:
    """The teacher's link as this session's: with its room, and the student's own language and presenter mode."""
    query = {**latest.query, **st.session_state[ROOM_LINK]}
    if state.lang_chosen:  # each student keeps the language they chose, else their browser's
        query["lang"] = state.lang
    if state.present:  # and presenter mode only if they turned it on (a projector of their own)
        query["present"] = "1"
    return query


def _take_here(query: dict, latest: rooms.Latest) -> None:
    """The teacher's link into this run's address, for the state to be read from it."""
    _took(latest)
    st.query_params.from_dict(query)


def _took(latest: rooms.Latest) -> None:
    st.session_state[ROOM]["took"] = (latest.page, latest.query)  # what the run that took it must show
    st.session_state.pop("state")  # read again from the link
    st.session_state[WHOLE_VIEW] = True  # a part of the view the teacher's link leaves out is at its default
    st.session_state[TOOK] = True


def _shown_query() -> dict:
    """The page's link without the room's part and each participant's own (the language, presenter mode)."""
    return {key: value for key, value in st.query_params.to_dict().items() if key not in LINK_KEYS + OWN_KEYS}


def publish(t) -> None:
    """The teacher's page and link into the room (a student's session has no key, and puts nothing; a following
    student's own change turns its following off). A key the room refuses, or a room that expired, makes this session
    leave the room as its teacher, with a note."""
    room = st.session_state.get(ROOM)
    if _attached(room):
        _notice_own_change(room)
    if not room or not room["key"]:
        return
    query = _shown_query()
    notes = []
    version = from_store(lambda: store().put(room["code"], room["key"], st.session_state[PAGE], query), notes)
    if version is not None and version != room["seen"]:  # the students of this process see it now
        room["seen"] = version
        watcher().nudge()
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


def _notice_own_change(room: dict) -> None:
    """At the end of a following student's run: the page and link it shows, as it showed them after it last took the
    teacher's (then the run's own); a change since is the student's own, which turns following off with a note (the
    app runs again for the sidebar's toggle to say so)."""
    shown, took = (st.session_state.get(PAGE), _shown_query()), st.session_state.pop(TOOK, False)
    if took and room["took"] != shown and room.get("retook") != room["seen"]:
        _take_again(room)
    if took or "shows" not in room:
        room["shows"] = shown
    elif shown != room["shows"]:
        st.session_state[WANDERED] = True
        _link_following(False)
        st.rerun(scope="app")


def _take_again(room: dict) -> None:
    """A run that took the teacher's page and link shows another: the browser's, whose rerun (asked before it heard
    of the switch, or of the new link) came first and replaced the run that took them. The room's version is taken
    again, once."""
    room["retook"], room["seen"] = room["seen"], None
    st.rerun(scope="app")


def code_tex(code: str) -> str:
    """A room's code as KaTeX draws it for the back of the room: \\Huge (about 48 px), monospace. The code is
    rooms.ALPHABET's letters and digits only, none of which reads as another from afar or means anything to TeX."""
    return rf"\Huge\texttt{{{code}}}"


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
