"""A session's part of a room (ui/classroom/following.py) and of presenter mode (ui/classroom/presenting.py), driven
through their pure functions without Streamlit, the way a reducer is tested: the teacher's page followed forward
and back to its defaults, a student's own change, a detached student's reload, a session rebuilt on another process
after a failover, a refused key; whether a phone can open the room's link (ui/classroom/reach.py).
tests/test_follow.py runs the same flows through a server."""
from dataclasses import replace

import pytest

from ui.classroom import following as room, presenting, reach
from ui.classroom.following import GONE, NUDGE, RERUN, WRONG_KEY, Following, Take, View
from ui.core.state import AppState
from ui.stores.rooms import Latest

CODE, KEY = "HKMN", "k" * 22
PAGES = {"overview", "attention", "qkv"}
STATE = AppState()


def student(**fields) -> Following:
    """A student following its room, on the attention page, which showed version 1 of the room."""
    return Following(code=CODE, seen=1, page="attention", **fields)


def taken_and_shown(following: Following, latest: Latest, here_allowed: bool = True) -> tuple[Following, Take]:
    """A look that finds the room at `latest`, and the run that took it ending on the teacher's view."""
    following, take = room.look(following, latest, STATE, PAGES, here_allowed)
    following, action = room.run_ended(following, View(latest.page, latest.query))
    assert action is None and not following.just_took
    return following, take


def test_a_student_follows_the_teacher_forward():
    """The teacher changes the sentence on the same page (taken in this run), then goes to another page (a switch);
    each time the page shows the room's version and the teacher's view, and stays attached."""
    following, take = taken_and_shown(student(), Latest(2, "attention", {"src": "Good morning"}))
    assert take == Take("attention", {"src": "Good morning", "room": CODE}, here=True)
    assert following.seen == 2 and following.shows == View("attention", {"src": "Good morning"})
    following = replace(following, page=take.page)
    following, take = taken_and_shown(following, Latest(3, "qkv", {"src": "Good morning"}))
    assert take == Take("qkv", {"src": "Good morning", "room": CODE}, here=False) and following.seen == 3
    assert following.attached and following.link == {"room": CODE}


def test_a_look_from_the_sidebar_switches_page_even_to_the_same_one():
    """The sidebar's look (its first run, or the poll) comes after the state is built: never taken in this run."""
    _, take = room.look(student(), Latest(2, "attention", {}), STATE, PAGES, here_allowed=False)
    assert not take.here


def test_going_back_to_the_defaults_is_followed():
    """The teacher's link leaves a default out: the student takes the teacher's link whole, not merged with what its
    own page showed (a head the teacher no longer names goes back to the default)."""
    following, _ = taken_and_shown(student(), Latest(2, "attention", {"head": "2", "step": "scaled"}))
    following, take = taken_and_shown(following, Latest(3, "attention", {}))
    assert take.query == {"room": CODE} and following.shows == View("attention", {})


def test_the_students_own_language_and_presenter_mode_stay_its_own():
    state = AppState(lang="zh-CN", lang_chosen=True, present=True)
    query = room.teachers_query(student(), Latest(2, "qkv", {"src": "hi", "lang": "en"}), state)
    assert query == {"src": "hi", "room": CODE, "lang": "zh-CN", "present": "1"}
    assert room.teachers_query(student(), Latest(2, "qkv", {}), STATE) == {"room": CODE}


def test_a_room_that_names_no_page_of_the_app_is_not_taken():
    """A store is shared: a page the app does not have leaves the version to be taken on a later look."""
    following = student()
    assert room.look(following, Latest(2, "no_such_page", {}), STATE, PAGES, True) == (following, None)
    assert room.look(following, None, STATE, PAGES, True) == (following, None)


def test_a_students_own_change_turns_following_off_with_a_note_once():
    following, _ = taken_and_shown(student(), Latest(2, "attention", {"src": "hi"}))
    unchanged, action = room.run_ended(following, View("attention", {"src": "hi"}))
    assert action is None and unchanged == following
    wandered, action = room.run_ended(following, View("qkv", {"src": "hi"}))
    assert action == RERUN and wandered.wandered and not wandered.attached
    assert wandered.link == {"room": CODE, "follow": "0"}
    told = room.told(wandered)
    assert not told.wandered and not told.attached  # said once, still detached
    again = room.toggled(told, True)
    assert again.attached and again.seen is None and again.link == {"room": CODE}  # the teacher's page at once
    assert room.behind(again, 2)


def test_a_run_the_browsers_rerun_replaced_takes_the_teachers_again_once():
    """The run that took the teacher's page ends on another view (the browser's rerun came first): the version is
    taken again, once; if it ends elsewhere again, that view is the page's."""
    latest = Latest(2, "qkv", {"src": "hi"})
    following, _ = room.look(student(), latest, STATE, PAGES, True)
    following, action = room.run_ended(following, View("attention", {"src": "old"}))
    assert action == RERUN and following.seen is None and following.retook == 2 and following.attached
    following, _ = room.look(following, latest, STATE, PAGES, True)
    following, action = room.run_ended(following, View("attention", {"src": "old"}))
    assert action is None and following.shows == View("attention", {"src": "old"}) and following.attached


def test_a_detached_student_stays_detached_across_a_reload():
    detached = room.toggled(student(), False)
    assert not detached.attached and detached.link == {"room": CODE, "follow": "0"}
    reloaded = room.from_link(CODE, None, False, detached.link.get("follow"))
    assert not reloaded.attached and reloaded.link == detached.link and reloaded.seen is None
    assert room.from_link(CODE, None, False, None).attached  # a following student's reload follows
    assert room.from_link(CODE, KEY, True, "0").link == {"room": CODE, "key": KEY}  # a teacher follows no one


def test_a_session_rebuilt_on_another_process_takes_up_the_room():
    """Failover: the browser reconnects to another process, to a new session that has only its link. The teacher's
    session puts again (its students are nudged); a student's takes the room's latest, which the dead process's
    teacher put into the shared store."""
    teacher = room.from_link(CODE, KEY, True, None)
    assert teacher.key == KEY and not teacher.attached and teacher.link == {"room": CODE, "key": KEY}
    put, action = room.published(teacher, 7, [])
    assert put.seen == 7 and action == NUDGE
    assert room.published(put, 7, []) == (put, None)  # no move: no one to wake
    student_again = replace(room.from_link(CODE, None, False, None), page="overview")
    assert student_again.attached and room.behind(student_again, 7) and not room.behind(student_again, None)
    following, take = taken_and_shown(student_again, Latest(7, "qkv", {"src": "hi"}), here_allowed=False)
    assert take.page == "qkv" and following.seen == 7 and following.attached


def test_a_refused_key_makes_a_student_and_a_room_gone_leaves_it():
    forged = room.from_link(CODE, "not-a-key", False, None)
    assert forged.refused and forged.key is None and forged.attached and forged.link == {"room": CODE}
    refused, action = room.published(room.from_link(CODE, KEY, True, None), None, [(WRONG_KEY, {"code": CODE})])
    assert action == RERUN and refused.refused and refused.key is None and refused.attached
    notes = [(GONE, {"code": CODE})]
    gone, action = room.published(room.from_link(CODE, KEY, True, None), None, notes)
    assert action == RERUN and gone.code is None and gone.link == {} and gone.notes == tuple(notes)
    down, action = room.published(put_at(3), None, [("room.unreachable", {})])
    assert action is None and down == put_at(3)  # the store is down: the students keep the last one


def put_at(version: int) -> Following:
    return replace(room.from_link(CODE, KEY, True, None), seen=version)


def test_a_new_room_starts_afresh_and_keeps_the_page_and_notes():
    wandered = replace(student(), detached=True, wandered=True, notes=(("room.unreachable", {}),))
    entered = room.entered(wandered, "ACEF")
    assert entered == Following(code="ACEF", page="attention", notes=wandered.notes)
    assert room.left(entered, [(GONE, {})]).notes == wandered.notes + ((GONE, {}),)
    assert room.from_link(None, KEY, True, "0") == Following()


def test_a_students_id_stays_in_its_link_through_a_reload_another_room_and_the_teachers_link():
    """The class quiz's answers are the student's by its id (me=), which the link carries: a reload or another
    process (from_link) is the same student, and so is a room it joins or a teacher's link it takes."""
    me = "m" * 16
    joined = room.from_link(CODE, None, False, None, me=me)
    assert joined.link == {"room": CODE, "me": me} and room.from_link(None, None, False, None, me=me).link == {}
    assert room.from_link(CODE, None, False, None, me=joined.link["me"]) == joined  # reloaded
    assert room.toggled(joined, False).link == {"room": CODE, "me": me, "follow": "0"}
    assert room.entered(room.left(joined), "ACEF").link == {"room": "ACEF", "me": me}
    _, take = room.look(joined, Latest(2, "qkv", {"src": "hi"}), STATE, PAGES, here_allowed=True)
    assert take.query == {"src": "hi", "room": CODE, "me": me}
    assert room.from_link(CODE, KEY, True, None, me=me).link == {"room": CODE, "key": KEY}  # a teacher answers none
    refused, _ = room.published(room.from_link(CODE, KEY, True, None, me=me), None, [(WRONG_KEY, {"code": CODE})])
    assert refused.link == {"room": CODE, "me": me}  # a refused teacher's key: a student, who may answer


def test_the_view_a_run_shows_leaves_out_the_room_and_each_participants_own():
    query = {"room": CODE, "key": KEY, "follow": "0", "lang": "en", "present": "1", "done": "x", "head": "2",
             "me": "m" * 16}
    assert room.shown_view("qkv", query) == View("qkv", {"head": "2"})


def test_a_presenters_key_opens_its_slide_here_or_on_another_page():
    drawn = presenting.drawn_on(presenting.Presenting(), "attention")
    here_slide, there_slide = ("enc", "attention", {"step": "scaled"}), ("enc", "qkv", {})
    assert not presenting.leaves_page(drawn, here_slide) and presenting.leaves_page(drawn, there_slide)
    opened, opening = presenting.opened(presenting.asked(drawn, here_slide))
    assert opening == presenting.Open("attention", {"step": "scaled"}, switch=False) and opened == drawn
    _, opening = presenting.opened(presenting.asked(drawn, there_slide))
    assert opening == presenting.Open("qkv", {}, switch=True)
    assert presenting.opened(drawn) == (drawn, None)


def test_the_rails_exit_reruns_the_app_before_a_pending_move():
    pending = presenting.exited(presenting.asked(presenting.Presenting(on="qkv"), ("enc", "attention", {})))
    after_exit, action = presenting.opened(pending)
    assert action == presenting.RERUN and not after_exit.left and after_exit.move == ("attention", {})


@pytest.mark.parametrize("url", ["http://localhost:8501/attention", "http://127.0.0.1:8501", "http://127.8.0.1/",
                                 "http://[::1]:8501/", "http://0.0.0.0:8501", "http://app.localhost:8501"])
def test_an_address_of_this_computer_alone_is_no_phones(url):
    assert reach.local_only(url)


@pytest.mark.parametrize("url", ["http://192.168.1.20:8501/", "https://class.example.org/attention",
                                 "http://[fd00::2]/", "", "http://localhostess.org/"])
def test_a_network_address_is_a_phones(url):
    assert not reach.local_only(url)


def test_the_students_link_moves_to_the_reachable_host_keeping_port_and_path():
    assert reach.with_host("http://localhost:8501/attention", "192.168.1.20") == "http://192.168.1.20:8501/attention"
    assert reach.with_host("http://127.0.0.1/", "fd00::2") == "http://[fd00::2]/"
    assert reach.with_host("http://localhost:8501/", "class.example.org") == "http://class.example.org:8501/"


def test_the_public_address_set_for_the_server_wins_unless_it_is_local():
    assert reach.public_host("class.example.org") == "class.example.org"
    assert reach.public_host("localhost") is None  # Streamlit's default
    assert reach.public_host("") is None and reach.public_host(None) is None


def test_this_computers_network_address_is_not_its_loopback():
    address = reach.machine_address()
    assert address is None or not reach.local_only(f"http://{address}/")
