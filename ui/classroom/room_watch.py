"""Students' pages woken when their room moves, instead of each page asking every second (pure: no Streamlit).

One thread per server process looks at the rooms its students follow WATCH_SECONDS apart, one read of a room's
version however many of its students the process holds, and wakes each student whose page shows an older version
(ui/classroom/follow.py gives it a function that reruns the student's page, which then takes the teacher's). A class
costs the server nothing while the teacher does nothing; a teacher's change made on the same process nudges it to look
at once. A change then costs one page run per student: they are woken AT_ONCE at a time, each as the one before it
reports back, so that the first pages are done early instead of all of them sharing the interpreter until the last
is done (one process runs one script at a time), and the teacher's own reruns are not crowded out.
"""
from __future__ import annotations

import collections
import logging
import threading
import time
from dataclasses import dataclass
from typing import Callable

WATCH_SECONDS = 0.25
AT_ONCE = 2  # students woken and not yet back
AGAIN_SECONDS = 5.0  # a student woken who has not reported back since is woken again (its run may have failed)

log = logging.getLogger(__name__)


@dataclass
class Follower:
    code: str  # the room
    seen: int | None  # the room's version the page shows


class Watcher:
    """version(code) -> the room's version, None if it is gone (or its store does not answer); wake(session) -> False
    if that session is gone (then it is forgotten). A woken session reports back by calling follow() again."""

    def __init__(self, version: Callable[[str], int | None], wake: Callable[[str], bool],
                 interval: float = WATCH_SECONDS, clock=time.monotonic):
        self._version, self._wake, self._interval, self._clock = version, wake, interval, clock
        self._followers: dict[str, Follower] = {}  # session id -> what its page shows
        self._versions: dict[str, int | None] = {}  # room code -> its version at the last look
        self._waiting: collections.deque = collections.deque()  # sessions to wake, in turn
        self._woken: dict[str, float] = {}  # session id -> when it was woken, until it reports back
        self._lock = threading.Lock()
        self._nudged = threading.Event()
        self._thread: threading.Thread | None = None

    def follow(self, session: str, code: str, seen: int | None) -> None:
        """A student's page shows version `seen` of room `code`: wake it when the room moves from there."""
        with self._lock:
            self._followers[session] = Follower(code, seen)
            self._woken.pop(session, None)
            self._wake_next()
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, name="room-watch", daemon=True)
                self._thread.start()

    def forget(self, session: str) -> None:
        with self._lock:
            self._followers.pop(session, None)
            self._woken.pop(session, None)
            self._wake_next()

    def nudge(self) -> None:
        """Look now, not at the next tick: a room of this process has just moved (its teacher is here)."""
        self._nudged.set()

    def following(self) -> dict[str, str]:
        """{session id: room code} of the pages this watcher wakes."""
        with self._lock:
            return {session: follower.code for session, follower in self._followers.items()}

    def tick(self) -> None:
        """One look: each followed room's version once, then the pages that show another one wait for their turn."""
        with self._lock:
            codes = {follower.code for follower in self._followers.values()}
        versions = {code: self._version(code) for code in codes}  # outside the lock: the store may be slow
        with self._lock:
            self._versions = versions
            now = self._clock()
            for session, when in list(self._woken.items()):
                if now - when > AGAIN_SECONDS:
                    del self._woken[session]
            queued = set(self._waiting)
            self._waiting.extend(session for session in self._followers
                                 if self._behind(session) and session not in queued and session not in self._woken)
            self._wake_next()

    def _behind(self, session: str) -> bool:
        follower = self._followers.get(session)
        return follower is not None and follower.code in self._versions and \
            self._versions[follower.code] != follower.seen

    def _wake_next(self) -> None:
        """Wake the next waiting sessions while fewer than AT_ONCE are out (under the lock)."""
        while self._waiting and len(self._woken) < AT_ONCE:
            session = self._waiting.popleft()
            if not self._behind(session) or session in self._woken:
                continue
            self._woken[session] = self._clock()
            if not self._wake(session):
                del self._followers[session], self._woken[session]

    def _watch(self) -> None:
        while True:
            self._nudged.wait(self._interval)
            self._nudged.clear()
            try:
                self.tick()
            except Exception:  # a bug here must not stop the class: logged, and the next tick tries again
                log.exception("room watch")
