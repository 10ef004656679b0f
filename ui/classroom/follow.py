"""Follow the teacher: a teacher's room, and students whose pages follow it (ui/stores/rooms.py keeps the rooms). This
is the Streamlit adapter of ui/classroom/following.py, which holds a session's part of its room as one value
(`Following`, in session_state under ROOM through ui/core/session_store.py) and the pure functions that change it:
each function here loads the value, reads the store, calls them, stores the value back and does what they ask
(rerun the app, take the teacher's link in this run, switch page).

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
following off, with a note: `publish()` compares the page and link a student's run ends on with those it showed
after it last took the teacher's (following.run_ended). A detached student's link holds follow=0, so a reload stays
detached.
"""
from __future__ import annotations

import secrets
import sqlite3
from dataclasses import replace

import segno
import streamlit as st

from ui.classroom import following as room_state, reach, room_watch, scroll
from ui.classroom.following import GONE, NUDGE, RERUN, Following, Take
from ui.classroom.share import copy_link_button
from ui.core import session, session_store, sidebar as controls, streamlit_internals
from ui.core.i18n import language_of, literal
from ui.core.navigation import HOME, PAGES
from ui.core.session import page_entry
from ui.core.session_store import CONTEXT, ROOM_LINK, STATE, WHOLE_VIEW
from ui.core.state import AppState, decode
from ui.stores import rooms
from ui.stores.rooms import RoomError

ROOM = "room"  # session_state: this session's Following
ATTACHED = "room.attached.{code}"  # the student's Follow toggle, which shows Following.detached (a new room's is new)
JOIN = "room.join"  # the field a student types a room's code into
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
    """What a store that does not answer raises (Redis's errors only when Redis is in use, so the package loads
    then)."""
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


def room() -> Following:
    """This session's part of its room (code None outside one)."""
    return session_store.load(ROOM, Following)


def _save(following_now: Following) -> None:
    """The session's Following, and the room's part of its link (session.write_link adds it to every address)."""
    session_store.put(ROOM, following_now)
    session_store.put(ROOM_LINK, following_now.link)


def note(notes) -> None:
    """Notes for the sidebar's next run (a callback's: a store that refused or did not answer)."""
    _save(room_state.noted(room(), notes))


def join_from_link() -> None:
    """On a session's first run: the room and key its link names, checked (a note says what was refused); a detached
    student's link (follow=0) stays detached; a student's id (me=) stays the student's."""
    if session_store.has(ROOM):
        return
    notes = []
    code_text, key = st.query_params.get("room"), st.query_params.get("key")
    code = None if code_text is None else _live_code(code_text, notes)
    _save(room_state.from_link(code, key, key is not None and rooms.valid_key(key), st.query_params.get("follow"),
                               notes, _students_id(st.query_params.get("me"), notes)))


def _students_id(text: str | None, notes: list) -> str:
    """A student's id for its quiz answers: its link's (me=), if it has the form of one, else a new one (a forged
    part named in a note, as text)."""
    if text is not None and rooms.valid_answerer(text):
        return text
    if text is not None:
        notes.append(("msg.url", {"detail": literal(f"me={text[:40]!r}")}))
    return secrets.token_urlsafe(12)


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
        notes.append((GONE, {"code": code}))
    return None


def following() -> bool:
    """Whether this session is a student following its room now: its page is drawn read-only and lean
    (ui/core/session.py: Context.reading)."""
    return room().attached


def sidebar(t, page, slot) -> None:
    """The room's part of the sidebar, drawn in `slot` (at its top: a teacher opens a room in one click, a student sees
    the Follow switch first); a student's page that is behind the teacher's goes to it (st.switch_page)."""
    here = room()
    notes, here = here.notes, replace(here, page=page.url_path if page.url_path in ALL_PAGES else HOME, notes=())
    _save(here)
    session_id = streamlit_internals.this_session()
    if session_id is not None:  # woken again only if the student's panel below says so
        watcher().forget(session_id)
        _page_fragments.pop(session_id, None)  # and its page's fragment alone only if the page says so
    for key, values in notes:  # above the page: presenter mode's link keeps the sidebar closed
        st.warning(t(key, **values))
    polling = False
    if here.key:
        _teacher_panel(t, here, slot)
    elif here.code:
        polling = _student_panel(t, here, slot)
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
        join_field(t, panel, JOIN, t("room.join"))


def join_field(t, where, key: str, label: str) -> None:
    """The field a student types a room's code into: in the sidebar's expander, and on the overview, a student's
    first screen."""
    where.text_input(label, key=key, max_chars=2 * rooms.CODE_LENGTH, on_change=_join_typed, args=(key,),
                     placeholder=t("room.join_placeholder"))


def open_room_button(t, where, key: str, width="stretch") -> None:
    """"Open a room", one click: at the sidebar's top, and on the overview, where a class starts (the sidebar's
    navigation fills a projector's first screen)."""
    where.button(t("room.open"), key=key, help=t("room.open_help"), on_click=_open_room, width=width,
                 icon=":material/groups:")


def in_room() -> bool:
    """Whether this session is in a room, as its teacher or a student."""
    return bool(room().code)


def _open_room() -> None:
    notes = []
    made = from_store(store().create, notes)
    here = room_state.noted(room(), notes)
    _save(here if made is None else room_state.entered(here, *made))


def _join_typed(key: str) -> None:
    notes = []
    code = _live_code(session_store.get(key), notes)
    here = room_state.noted(room(), notes)
    _save(here if code is None else room_state.entered(here, code))


def _leave() -> None:
    _save(room_state.left(room()))


def _teacher_panel(t, here: Following, slot) -> None:
    """The QR code of the students' link and the room's code, big, for the projector; the code under the QR code,
    which its fullscreen button (over the image's top right corner, shown on hover) would otherwise cover."""
    link = _students_link(here)
    panel = slot.container(border=True)
    panel.image(qr_png_uri(link), caption=t("room.scan"), width="stretch")
    _code_and_link(t, panel, here.code, link)
    _warn_if_local(t, panel)
    panel.caption(t("room.teacher_note"))
    panel.button(t("room.leave"), key="room.leave", on_click=_close_room)


def join_card(t, where):
    """How students join, in the main area (where a class starts: the overview), for the room's teacher: the
    sidebar's panel sits under its navigation, below a 720-px projector's first screen. The QR code beside the
    code, big, and the link, in a row that may take more (the card), or None for a student or outside a room."""
    here = room()
    if not here.key:
        return None
    link = _students_link(here)
    card = where.container(border=True, horizontal=True, vertical_alignment="center", gap="large", key="room.card")
    card.image(qr_png_uri(link), caption=t("room.scan_or_link"), width=JOIN_QR_PX)
    _code_and_link(t, card.container(), here.code, link)
    _warn_if_local(t, where)  # under the card: the code, the QR code and Start stay on a projector's first screen
    return card


def _students_link(here: Following) -> str:
    """The students' link, on an address their phones open (reach.py) when the teacher's names this computer only."""
    url = st.context.url or ""
    host = _reachable_host() if reach.local_only(url) else None
    return students_link(reach.with_host(url, host) if host else url, here.page, here.code)


def _reachable_host() -> str | None:
    """The server's public address if one is set (browser.serverAddress), else this computer's on its network."""
    return reach.public_host(st.get_option("browser.serverAddress")) or _machine_address()


@st.cache_resource(ttl=600, show_spinner=False)
def _machine_address() -> str | None:
    return reach.machine_address()


def _warn_if_local(t, where) -> None:
    """The teacher opened the app at an address of this computer alone: the link the students get takes another,
    said here, or, with none found, how to open the app at one."""
    if not reach.local_only(st.context.url or ""):
        return
    host = _reachable_host()
    where.warning(t("room.local", host=literal(host)) if host else t("room.local_only"), icon=":material/wifi_off:")


def _code_and_link(t, where, code: str, link: str) -> None:
    where.caption(t("room.code"))
    where.latex(code_tex(code))
    where.code(link, language=None, wrap_lines=True)  # text, never markup: the host is what the browser sent


def _close_room() -> None:
    """The teacher leaves: the room ends, and each student's next look at it says so (room.gone)."""
    here, notes = room(), []
    from_store(lambda: store().close(here.code, here.key), notes)
    watcher().nudge()
    _save(room_state.left(here, notes))


def _student_panel(t, here: Following, slot) -> bool:
    """The student's panel; whether it holds a timed fragment: the poll of the room, where no watcher can wake the
    page (ui/classroom/room_watch.py)."""
    panel = slot.container(border=True)
    if here.wandered:  # the student's own change (publish): following is off, and it says so
        st.warning(t("room.wandered"), icon=":material/link_off:")  # above the page, where the student looks
        scroll.to_top(here.page)
        here = room_state.told(here)
        _save(here)
    key = ATTACHED.format(code=here.code)
    if session_store.get(key, True) == here.detached:  # the toggle shows the room's state (follow=0, wandered)
        session_store.put(key, not here.detached)
    attached = panel.toggle(t("room.follow", code=here.code), value=True, key=key, on_change=_reattach, args=(key,))
    panel.caption(t("room.following") if attached else t("room.detached", code=here.code))
    if here.refused:  # above the page, where a student opening a copied teacher's link (present=1) looks
        st.warning(t("room.wrong_key", code=here.code), icon=":material/key_off:")
    panel.button(t("room.leave"), key="room.leave", on_click=_leave)
    session_id = streamlit_internals.this_session()
    if attached and session_id is None:  # no watcher: the page asks the room itself
        with panel:
            st.fragment(run_every=POLL_SECONDS)(_follow)()
        return True
    if attached:
        if here.seen is None:  # the first run: the teacher's page now (later runs catch up before the page)
            with panel:
                here = _follow()
        watcher().follow(session_id, here.code, here.seen)
    return False


def _reattach(key) -> None:
    _save(room_state.toggled(room(), session_store.get(key)))


def catch_up() -> None:
    """Before the state is built: a following student's page that is behind the room takes the teacher's page and
    link, in this run if the page is the same, else by st.switch_page. The watcher wakes such a run when the room
    moves; a student's own runs catch up too."""
    here = room()
    if not here.attached or not session_store.has(STATE):
        return
    notes = []
    here, taken = _look(here, session_store.get(STATE), notes, here_allowed=True)
    if room_state.is_gone(notes):
        _save(room_state.left(here, notes))
        return
    _save(room_state.noted(here, notes))
    if taken is not None:
        _take(taken)


def catch_up_on_page() -> None:
    """At the start of a step page's fragment. A following student's page names the fragment for the watcher to
    rerun alone; in such a run (no app.py, sidebar or navigation: about half the cost), the teacher's link is taken
    here, if the teacher is on this page and the sidebar holds (ui/core/session.py: same_sidebar). Else the whole app
    runs, whose catch_up() takes it. The page reports back to the watcher."""
    here, session_id = room(), streamlit_internals.this_session()
    if session_id is None or not here.attached:
        return
    _page_fragments[session_id] = streamlit_internals.this_fragment()
    if not streamlit_internals.fragment_run():
        return
    latest = from_store(lambda: store().latest(here.code), [])
    if latest is None or latest.version != here.seen:
        if latest is None or latest.page != here.page:  # a room gone, a store that does not answer, another page
            st.rerun(scope="app")
        state = session_store.get(STATE)
        here, query = room_state.take(here, latest, state)
        if not session.same_sidebar(state, _state_of(query)) or _quiz_moved(here):  # another model, or the class
            st.rerun(scope="app")  # quiz's question asked, closed or revealed: the whole app
        _save(here)
        _take(Take(latest.page, query, here=True))
        controls.start_from_link()
    watcher().follow(session_id, here.code, here.seen)


def show_quiz(shown: tuple | None) -> None:
    """The (number, state) of the room's question the page shows (ui/classroom/quiz.py: current)."""
    _save(replace(room(), quiz_shown=shown))


def _quiz_moved(here: Following) -> bool:
    """Whether the room's question is another, or in another state, than the one the page shows (drawn above the
    page, outside a step page's fragment)."""
    quiz = from_store(lambda: store().quiz(here.code), [])
    return (None if quiz is None else (quiz.number, quiz.state)) != here.quiz_shown


def _state_of(query: dict) -> AppState:
    return decode(query, default_lang=language_of(st.context.locale))[0]


def _follow() -> Following:
    """A student's look at the room from the sidebar: on the first run, and every second (a timed fragment) where no
    watcher wakes the page."""
    notes = []
    here, taken = _look(room(), session_store.get(STATE), notes, here_allowed=False)
    if room_state.is_gone(notes):
        _save(room_state.left(here, notes))
        st.rerun(scope="app")
    _save(here)
    t = session_store.get(CONTEXT).t
    for key, values in notes:  # a store that does not answer: asked again soon
        st.caption(t(key, **values))
    if taken is not None:
        _take(taken)
    return here


def _look(here: Following, state: AppState, notes: list, here_allowed: bool) -> tuple[Following, Take | None]:
    """One small read of the room's version; if it moved from the one this page shows, the teacher's page and link to
    take (following.look). A room gone or a store that does not answer: nothing to take, with a note."""
    version = from_store(lambda: store().version(here.code), notes)
    if version is None and not notes:  # the room expired
        notes.append((GONE, {"code": here.code}))
    if not room_state.behind(here, version):
        return here, None
    latest = from_store(lambda: store().latest(here.code), notes)
    return room_state.look(here, latest, state, ALL_PAGES, here_allowed)


def _take(taken: Take) -> None:
    """The teacher's link as this session's (Following.just_took is set), read as a fresh session reads its link: in
    this run (before the state is built) or, on another page, by st.switch_page."""
    session_store.pop(STATE)  # read again from the link
    session_store.put(WHOLE_VIEW, True)  # a part of the view the teacher's link leaves out is at its default
    if taken.here:
        st.query_params.from_dict(taken.query)
        return
    st.switch_page(page_entry(session_store.get(CONTEXT).t, taken.page), query_params=taken.query)


def publish(t) -> None:
    """The teacher's page and link into the room (a student's session has no key, and puts nothing; a following
    student's own change turns its following off). A key the room refuses, or a room that expired, makes this session
    leave the room as its teacher, with a note."""
    here = room()
    if here.attached:
        here = _notice_own_change(here)
    if not here.key:
        return
    notes = []
    shown = room_state.shown_view(here.page, st.query_params.to_dict())
    version = from_store(lambda: store().put(here.code, here.key, shown.page, shown.query), notes)
    here, action = room_state.published(here, version, notes)
    _save(here)
    if action == NUDGE:
        watcher().nudge()
    elif action == RERUN:
        st.rerun(scope="app")
    for key, values in notes:  # the store is down, or the state too big: the students keep the last one
        st.sidebar.warning(t(key, **values))


def _notice_own_change(here: Following) -> Following:
    """At the end of a following student's run: what its page shows (following.run_ended), which may take the
    teacher's again, or turn following off with a note (the app runs again for the sidebar's toggle to say so)."""
    here, action = room_state.run_ended(here, room_state.shown_view(here.page, st.query_params.to_dict()))
    _save(here)
    if action == RERUN:
        st.rerun(scope="app")
    return here


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
