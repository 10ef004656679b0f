"""The room watcher (ui/classroom/room_watch.py), without Streamlit or threads: each tick reads each followed room once,
and wakes the pages that show another version, AT_ONCE at a time, each report bringing the next one's turn."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from ui.classroom.room_watch import AGAIN_SECONDS, AT_ONCE, Watcher  # noqa: E402
from ui.stores import rooms  # noqa: E402


class Room:
    """Versions by room code, the reads made, the sessions woken (in order) and the sessions that are gone."""

    def __init__(self, **versions):
        self.versions, self.reads, self.woken, self.gone, self.now = versions, [], [], set(), 0.0

    def version(self, code):
        self.reads.append(code)
        return self.versions.get(code)

    def wake(self, session):
        self.woken.append(session)
        return session not in self.gone

    def watcher(self) -> Watcher:
        watcher = Watcher(self.version, self.wake, clock=lambda: self.now)
        watcher._thread = "not started"  # tick() by hand
        return watcher


def test_one_read_per_room_and_only_the_pages_behind_are_woken():
    room = Room(ABCD=3, WXYZ=7)
    watcher = room.watcher()
    for i in range(40):
        watcher.follow(f"s{i}", "ABCD", 3 if i % 2 else 2)  # the odd ones show the room's version
    watcher.follow("t", "WXYZ", 7)
    watcher.tick()
    assert sorted(room.reads) == ["ABCD", "WXYZ"]
    assert room.woken == ["s0", "s2"][:AT_ONCE]


def test_each_report_brings_the_next_turn_in_order_until_all_are_woken_once():
    room = Room(ABCD=2)
    watcher = room.watcher()
    sessions = [f"s{i}" for i in range(7)]
    for session in sessions:
        watcher.follow(session, "ABCD", 1)
    watcher.tick()
    while len(room.woken) < len(sessions):
        before = len(room.woken)
        watcher.follow(room.woken[before - AT_ONCE], "ABCD", 2)  # the oldest woken page now shows version 2
        assert len(room.woken) == before + 1
        watcher.tick()  # a tick in between wakes no one twice
        assert len(room.woken) == before + 1
    assert room.woken == sessions
    for session in sessions[-AT_ONCE:]:
        watcher.follow(session, "ABCD", 2)
    watcher.tick()
    assert room.woken == sessions  # all caught up: nothing more


def test_a_page_that_does_not_report_back_is_woken_again_and_a_gone_session_is_forgotten():
    room = Room(ABCD=5)
    watcher = room.watcher()
    watcher.follow("slow", "ABCD", 4)
    watcher.follow("closed", "ABCD", 4)
    room.gone.add("closed")
    watcher.tick()
    assert room.woken == ["slow", "closed"] and watcher.following() == {"slow": "ABCD"}
    room.now += AGAIN_SECONDS / 2
    watcher.tick()
    assert room.woken == ["slow", "closed"]
    room.now += AGAIN_SECONDS
    watcher.tick()
    assert room.woken == ["slow", "closed", "slow"]


def test_a_forgotten_page_or_a_room_that_moves_back_wakes_no_one():
    room = Room(ABCD=5)
    watcher = room.watcher()
    watcher.follow("detached", "ABCD", 4)
    watcher.forget("detached")
    watcher.follow("student", "ABCD", 5)
    watcher.tick()
    assert room.woken == [] and watcher.following() == {"student": "ABCD"}
    room.versions["ABCD"] = None  # the room is gone (or its store does not answer): the page is told
    watcher.tick()
    assert room.woken == ["student"]


class _StoreThatFailsOnRead:
    """A room at version 7 whose whole read fails once (a store busy past its timeout), then answers."""

    def __init__(self):
        self.failures = 1

    def version(self, code):
        return 7

    def latest(self, code):
        if self.failures:
            self.failures -= 1
            raise OSError("timed out")
        return rooms.Latest(7, "qkv", {"src": "hi"})


def test_a_rooms_version_that_could_not_be_read_is_taken_on_a_later_run(monkeypatch):
    """The version a student's page shows moves only with what it took: a read of the teacher's page that fails
    leaves the page behind (the watcher wakes it again), not marked as showing the version it never got."""
    from ui.classroom import follow
    from ui.classroom.following import Following
    from ui.core.state import AppState
    fake = _StoreThatFailsOnRead()
    monkeypatch.setattr(follow, "store", lambda: fake)
    behind, notes = Following(code="ABCD", seen=6, page="attention"), []
    assert follow._look(behind, AppState(), notes, here_allowed=True) == (behind, None)
    assert notes == [("room.unreachable", {})]
    took, taken = follow._look(behind, AppState(), [], here_allowed=True)
    assert taken.page == "qkv" and not taken.here and took.seen == 7
