"""Classroom rooms: a teacher's current page and link, kept where every process of the server reads it (pure).

A teacher opens a room and gets a short code (`ABCD`, from an alphabet without look-alikes) and a secret; the
teacher's link carries both (`room=ABCD&key=...`), the students' link the code only. Each rerun of the teacher's
app puts its page and link query into the room, and the room's version goes up when they change; a student's page
polls the version (one small read) and, when it moved, reads the rest. Only the secret's holder can put: the room
keeps a SHA-256 of it, so reading the store gives no way to write.

A room also holds the class quiz: the teacher asks one question at a time (`ask`, which opens it), closes it to
answers and reveals it; each student session answers the open question once (`answer`, with whether it was right,
checked by the student's own process); the tally of answers is the teacher's until the question is revealed, then
everyone's. Asking, closing and revealing raise the room's version (students' pages wake); answers do not. Asking
again forgets the answers to the question before; the quiz ends with its room.

Two stores behind one interface, `Rooms`: SQLite in a file that every process of the machine shares (the default;
WAL mode and short transactions, safe across processes), or Redis when TRANSFORMER_REDIS_URL is set (processes on
several machines). A room ends when its teacher leaves it, or expires when its teacher has put nothing for `ttl`
seconds.

    TRANSFORMER_ROOMS_DB        the SQLite file (default: build/rooms.sqlite3 in this checkout)
    TRANSFORMER_ROOM_HOURS      how long an idle room lives (default 4)
    TRANSFORMER_REDIS_URL       redis://host:port/db: rooms (and weights, ui/stores/weights.py) go there instead
"""
from __future__ import annotations

import abc
import hashlib
import hmac
import json
import math
import os
import re
import secrets
import sqlite3
import threading
import time
from pathlib import Path
from typing import NamedTuple

ALPHABET = "ACEFHKMNPRTWXY3479"  # none of the pairs read wrong from the back of a room: 0OQD 1IJL 2Z 5S 8B 6G UV
CODE_LENGTH = 4
CODE = re.compile(f"[{ALPHABET}]{{{CODE_LENGTH}}}")
KEY = re.compile(r"[A-Za-z0-9_-]{22}")  # secrets.token_urlsafe(16)
MAX_QUERY_BYTES = 64 * 1024  # a link's query as JSON: two sentences of 2,000 characters and 200 edits fit
MAX_ROOMS = 1000  # live rooms at once; a store full of them refuses a new one until some expire
CREATE_TRIES = 20
DEFAULT_DB = Path(__file__).resolve().parents[2] / "build" / "rooms.sqlite3"
REDIS_PREFIX = "transformer:"


class RoomError(ValueError):
    """A room refused something; args: (message key of the catalogs, values for the message)."""


class Latest(NamedTuple):
    version: int
    page: str
    query: dict


QUIZ_STATES = ("open", "closed", "revealed", "put_away")  # put away: the class has moved on; shown to no one
MAX_ANSWER_CHARS = 64  # a number as typed, a choice or a token
SESSION = re.compile(r"[A-Za-z0-9_-]{1,64}")
ANSWERER = re.compile(r"[A-Za-z0-9_-]{16}")  # secrets.token_urlsafe(12): a student's id in its link (me=)


class Quiz(NamedTuple):
    number: int  # the room's questions so far: 1 for its first
    question: dict  # as the teacher asked it (read as untrusted)
    state: str  # one of QUIZ_STATES


class Answer(NamedTuple):
    value: float | str
    right: bool
    time: float = 0.0  # when it was given (seconds since the epoch, the store's clock)


def normal_code(text: str) -> str | None:
    """The room code a link or a student typed, upper-cased, or None if it is not one."""
    code = str(text).strip().upper() if len(str(text)) <= 2 * CODE_LENGTH else ""
    return code if CODE.fullmatch(code) else None


def valid_key(text: str) -> bool:
    return bool(KEY.fullmatch(str(text)))


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def _check(code: str, key: str) -> None:
    """RoomError unless a teacher's code and key are well formed."""
    if not CODE.fullmatch(str(code)):
        raise RoomError("room.bad_code", {"code": str(code)[:12]})
    if not valid_key(key):
        raise RoomError("room.wrong_key", {"code": code})


def _granted(code: str, answer: int | None) -> int:
    """A backend's answer to a teacher's write (None: no live room; -1: a wrong key), else RoomError."""
    if answer is None:
        raise RoomError("room.gone", {"code": code})
    if answer < 0:
        raise RoomError("room.wrong_key", {"code": code})
    return answer


def _encode(page: str, query: dict) -> str:
    text = json.dumps({"page": page, "query": query}, sort_keys=True, separators=(",", ":"))
    if len(text.encode()) > MAX_QUERY_BYTES:
        raise RoomError("room.too_big", {"kb": MAX_QUERY_BYTES // 1024})
    return text


def _json_object(text: str) -> dict | None:
    try:
        held = json.loads(text)
    except (TypeError, ValueError):
        return None
    return held if isinstance(held, dict) else None


def _quiz(found) -> Quiz | None:
    """A quiz as the store holds it (number, state, question text), if it has the expected form."""
    if found is None:
        return None
    number, state, text = found
    question = _json_object(text)
    if question is None or state not in QUIZ_STATES:
        return None
    return Quiz(int(number), question, state)


def _answer_text(value) -> str:
    """An answer as stored: a finite number (as a float), or a short text; RoomError("quiz.bad_answer") for anything
    else, an integer beyond a float's range among them."""
    if isinstance(value, str) and 0 < len(value) <= MAX_ANSWER_CHARS:
        return json.dumps(value)
    number = _finite(value)
    if number is None:
        raise RoomError("quiz.bad_answer", {"n": MAX_ANSWER_CHARS})
    return json.dumps(number)


def _finite(value) -> float | None:
    """value as a finite float, if it is a number (not a bool) within a float's range; else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def valid_answerer(text) -> bool:
    """Whether a link's me= has the form of a student's id (one this app made, or a forgery of the same form)."""
    return bool(ANSWERER.fullmatch(str(text)))


def _answers(rows) -> list[Answer]:
    """The answers as the store holds them ((text, right, time) rows), those of the expected form: a store is shared,
    so what it holds is read as untrusted (a number is one within a float's range, read as a float)."""
    kept = []
    for text, right, when in rows:
        try:
            value = json.loads(text)
        except (TypeError, ValueError):  # a ValueError too for an integer of over 4,300 digits
            continue
        value, when = (value if isinstance(value, str) else _finite(value)), _finite(_number(when))
        if value is not None and when is not None:
            kept.append(Answer(value, right in (1, "1"), when))
    return kept


def _number(held):
    """A time as a store holds it (a number, or its text in Redis) as a float, else None."""
    try:
        return float(held)
    except (TypeError, ValueError, OverflowError):
        return None


def _decode(version: int, text: str) -> Latest | None:
    """What the store holds, if it has the expected form (a store is shared: read it as untrusted)."""
    try:
        held = json.loads(text)
    except (TypeError, ValueError):
        return None
    if not isinstance(held, dict) or not isinstance(held.get("page"), str) or not isinstance(held.get("query"), dict):
        return None
    query = held["query"]
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in query.items()):
        return None
    return Latest(int(version), held["page"], query)


class Rooms(abc.ABC):
    """The interface: create, put (teacher), version and latest (students). Subclasses store the rows."""

    def __init__(self, *, ttl: float = 4 * 3600, max_rooms: int = MAX_ROOMS, clock=time.time):
        self.ttl, self.max_rooms, self.clock = ttl, max_rooms, clock

    def create(self) -> tuple[str, str]:
        """A new room's (code, key); RoomError("room.full") if the store holds max_rooms live rooms."""
        key = secrets.token_urlsafe(16)
        for _ in range(CREATE_TRIES):
            code = "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))
            if self._insert(code, _digest(key), self.clock()):
                return code, key
        raise RoomError("room.full", {"n": self.max_rooms})

    def put(self, code: str, key: str, page: str, query: dict) -> int:
        """Put the teacher's page and query; the room's version, raised if they changed. RoomError if the code or
        the key is malformed, the room is gone (expired) or the key is not the room's."""
        _check(code, key)
        return _granted(code, self._update(code, _digest(key), _encode(page, query), self.clock()))

    def close(self, code: str, key: str) -> None:
        """End the room now, as its teacher leaves it: its students' next look finds no room. RoomError if the code
        or the key is malformed, the room is gone or the key is not the room's."""
        _check(code, key)
        _granted(code, self._delete(code, _digest(key), self.clock()))

    def version(self, code: str) -> int | None:
        """The room's version (cheap: what a student polls), or None if there is no such live room."""
        return self._version(code, self.clock()) if CODE.fullmatch(str(code)) else None

    def latest(self, code: str) -> Latest | None:
        """The teacher's last page and query, or None if there is no such live room (or it holds nothing yet)."""
        found = self._latest(code, self.clock()) if CODE.fullmatch(str(code)) else None
        return None if found is None or found[0] == 0 else _decode(*found)

    def ask(self, code: str, key: str, question: dict) -> int:
        """Open a question to the class (the one before, and its answers, are gone); its number. RoomError as put."""
        _check(code, key)
        text = json.dumps(question, sort_keys=True, separators=(",", ":"))
        if len(text.encode()) > MAX_QUERY_BYTES:
            raise RoomError("room.too_big", {"kb": MAX_QUERY_BYTES // 1024})
        return _granted(code, self._ask(code, _digest(key), text, self.clock()))

    def set_quiz_state(self, code: str, key: str, number: int, state: str) -> None:
        """Close question `number` to answers, reveal it, put it away, or open it again. RoomError as put, or
        "quiz.gone" if the room's question is another."""
        _check(code, key)
        if state not in QUIZ_STATES:
            raise RoomError("quiz.gone", {"code": code})
        if _granted(code, self._set_quiz_state(code, _digest(key), int(number), state, self.clock())) == 0:
            raise RoomError("quiz.gone", {"code": code})

    def quiz(self, code: str) -> Quiz | None:
        """The room's question, or None if it has none (or no such live room)."""
        return _quiz(self._quiz(code, self.clock())) if CODE.fullmatch(str(code)) else None

    def answer(self, code: str, number: int, session: str, value, right: bool) -> bool:
        """A student session's answer to question `number`; False if that session has answered it already (the
        first answer stays). RoomError("quiz.closed") unless the question is the room's and open, "room.gone" if no
        live room, "quiz.bad_answer" for a value not a finite number or a short text."""
        text = _answer_text(value)
        if not CODE.fullmatch(str(code)) or not SESSION.fullmatch(str(session)):
            raise RoomError("room.gone", {"code": str(code)[:12]})
        done = self._answer(code, int(number), str(session), text, bool(right), self.clock())
        if done is None:
            raise RoomError("room.gone", {"code": code})
        if done < 0:
            raise RoomError("quiz.closed", {"code": code})
        return done == 1

    def answer_of(self, code: str, number: int, session: str) -> Answer | None:
        """Session `session`'s own answer to question `number`, if it gave one (a reload, or a browser moved to another
        process, finds it again); None for a malformed code or session."""
        if not CODE.fullmatch(str(code)) or not SESSION.fullmatch(str(session)):
            return None
        found = self._answer_of(code, int(number), str(session))
        return None if found is None else next(iter(_answers([found])), None)

    def tally(self, code: str, number: int, key: str | None = None) -> list[Answer]:
        """The answers to question `number`: the teacher's (key) while it is open or closed, everyone's once it is
        revealed. RoomError("room.wrong_key") otherwise."""
        quiz = self.quiz(code)
        if quiz is None or quiz.number != number:
            raise RoomError("quiz.gone", {"code": str(code)[:12]})
        if quiz.state != "revealed":
            _check(code, key)
            if not self._is_teacher(code, _digest(key), self.clock()):
                raise RoomError("room.wrong_key", {"code": code})
        return _answers(self._tally(code, number))

    # ---- the rows, a backend's part: _insert -> whether the code was free; _update -> the version, None for no
    # live room, -1 for a wrong key; _delete -> 1 (deleted), None or -1 as _update; _version -> int or None;
    # _latest -> (version, stored text) or None. The quiz: _ask -> the question's number, None or -1 as _update;
    # _set_quiz_state -> 1, 0 if the room's question is another, None or -1; _quiz -> (number, state, question
    # text) or None; _answer -> 1 (kept), 0 (answered before), -2 (not the open question), None (no live room);
    # _answer_of -> (answer text, right, time) or None; _tally -> [(answer text, right, time)]; _is_teacher ->
    # whether the digest is the live room's.
    @abc.abstractmethod
    def _ask(self, code, digest, text, now) -> int | None: ...

    @abc.abstractmethod
    def _set_quiz_state(self, code, digest, number, state, now) -> int | None: ...

    @abc.abstractmethod
    def _quiz(self, code, now) -> tuple[int, str, str] | None: ...

    @abc.abstractmethod
    def _answer(self, code, number, session, text, right, now) -> int | None: ...

    @abc.abstractmethod
    def _answer_of(self, code, number, session) -> tuple[str, int, float] | None: ...

    @abc.abstractmethod
    def _tally(self, code, number) -> list[tuple[str, int, float]]: ...

    @abc.abstractmethod
    def _is_teacher(self, code, digest, now) -> bool: ...

    @abc.abstractmethod
    def _insert(self, code, digest, now) -> bool: ...

    @abc.abstractmethod
    def _update(self, code, digest, text, now) -> int | None: ...

    @abc.abstractmethod
    def _delete(self, code, digest, now) -> int | None: ...

    @abc.abstractmethod
    def _version(self, code, now) -> int | None: ...

    @abc.abstractmethod
    def _latest(self, code, now) -> tuple[int, str] | None: ...


class SqliteRooms(Rooms):
    """Rooms in one SQLite file, shared by the processes of a machine. One connection per store, used under a
    lock (Streamlit runs each script in a thread of its own); each write is one short IMMEDIATE transaction."""

    def __init__(self, path, **limits):
        super().__init__(**limits)
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, timeout=10, isolation_level=None, check_same_thread=False)
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")  # WAL: durable at checkpoints, never corrupt
            self._db.execute("CREATE TABLE IF NOT EXISTS rooms (code TEXT PRIMARY KEY, digest TEXT NOT NULL, "
                             "version INTEGER NOT NULL, state TEXT NOT NULL, touched REAL NOT NULL)")
            self._db.execute("CREATE TABLE IF NOT EXISTS quizzes (code TEXT PRIMARY KEY, number INTEGER NOT NULL, "
                             "state TEXT NOT NULL, question TEXT NOT NULL)")
            self._db.execute("CREATE TABLE IF NOT EXISTS answers (code TEXT NOT NULL, number INTEGER NOT NULL, "
                             "session TEXT NOT NULL, answer TEXT NOT NULL, right INTEGER NOT NULL, "
                             "time REAL NOT NULL DEFAULT 0, PRIMARY KEY (code, number, session))")
            if "time" not in {row[1] for row in self._db.execute("PRAGMA table_info(answers)")}:  # an older file
                self._db.execute("ALTER TABLE answers ADD COLUMN time REAL NOT NULL DEFAULT 0")

    def _write(self, work):
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                result = work(self._db)
                self._db.execute("COMMIT")
                return result
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def _read(self, sql, args):
        with self._lock:
            return self._db.execute(sql, args).fetchone()

    def _live(self, db, code, now):
        return db.execute("SELECT digest, version, state FROM rooms WHERE code = ? AND touched >= ?",
                          (code, now - self.ttl)).fetchone()

    def _teachers(self, db, code, digest, now, work):
        """work(db, row) on the live room whose digest this is; None if there is no live room, -1 if not its key."""
        row = self._live(db, code, now)
        if row is None:
            return None
        if not hmac.compare_digest(row[0], digest):
            return -1
        return work(db, row)

    def _insert(self, code, digest, now) -> bool:
        def insert(db):
            db.execute("DELETE FROM rooms WHERE touched < ?", (now - self.ttl,))
            for table in ("quizzes", "answers"):  # the quizzes of rooms gone
                db.execute(f"DELETE FROM {table} WHERE code NOT IN (SELECT code FROM rooms)")
            if db.execute("SELECT count(*) FROM rooms").fetchone()[0] >= self.max_rooms:
                raise RoomError("room.full", {"n": self.max_rooms})
            return db.execute("INSERT OR IGNORE INTO rooms VALUES (?, ?, 0, '', ?)", (code, digest, now)).rowcount == 1
        return self._write(insert)

    def _update(self, code, digest, text, now):
        def update(db, row):
            version = row[1] + (row[2] != text)
            db.execute("UPDATE rooms SET version = ?, state = ?, touched = ? WHERE code = ?",
                       (version, text, now, code))
            return version
        return self._write(lambda db: self._teachers(db, code, digest, now, update))

    def _delete(self, code, digest, now):
        def delete(db, row):
            for table in ("rooms", "quizzes", "answers"):
                db.execute(f"DELETE FROM {table} WHERE code = ?", (code,))
            return 1
        return self._write(lambda db: self._teachers(db, code, digest, now, delete))

    def _version(self, code, now):
        row = self._read("SELECT version FROM rooms WHERE code = ? AND touched >= ?", (code, now - self.ttl))
        return None if row is None else row[0]

    def _latest(self, code, now):
        return self._read("SELECT version, state FROM rooms WHERE code = ? AND touched >= ?", (code, now - self.ttl))

    @staticmethod
    def _raise_version(db, code, now):
        db.execute("UPDATE rooms SET version = version + 1, touched = ? WHERE code = ?", (now, code))

    def _ask(self, code, digest, text, now):
        def ask(db, row):
            held = db.execute("SELECT number FROM quizzes WHERE code = ?", (code,)).fetchone()
            number = 1 if held is None else held[0] + 1
            db.execute("INSERT OR REPLACE INTO quizzes VALUES (?, ?, 'open', ?)", (code, number, text))
            db.execute("DELETE FROM answers WHERE code = ?", (code,))
            self._raise_version(db, code, now)
            return number
        return self._write(lambda db: self._teachers(db, code, digest, now, ask))

    def _set_quiz_state(self, code, digest, number, state, now):
        def change(db, row):
            if db.execute("UPDATE quizzes SET state = ? WHERE code = ? AND number = ?",
                          (state, code, number)).rowcount == 0:
                return 0
            self._raise_version(db, code, now)
            return 1
        return self._write(lambda db: self._teachers(db, code, digest, now, change))

    def _quiz(self, code, now):
        return self._read("SELECT q.number, q.state, q.question FROM quizzes q JOIN rooms r ON q.code = r.code "
                          "WHERE q.code = ? AND r.touched >= ?", (code, now - self.ttl))

    def _answer(self, code, number, session, text, right, now):
        def answer(db):
            if self._live(db, code, now) is None:
                return None
            if db.execute("SELECT 1 FROM quizzes WHERE code = ? AND number = ? AND state = 'open'",
                          (code, number)).fetchone() is None:
                return -2
            return db.execute("INSERT OR IGNORE INTO answers (code, number, session, answer, right, time) "
                              "VALUES (?, ?, ?, ?, ?, ?)", (code, number, session, text, int(right), now)).rowcount
        return self._write(answer)

    def _answer_of(self, code, number, session):
        return self._read("SELECT answer, right, time FROM answers WHERE code = ? AND number = ? AND session = ?",
                          (code, number, session))

    def _tally(self, code, number):
        with self._lock:
            return self._db.execute("SELECT answer, right, time FROM answers WHERE code = ? AND number = ?",
                                    (code, number)).fetchall()

    def _is_teacher(self, code, digest, now):
        row = self._read("SELECT digest FROM rooms WHERE code = ? AND touched >= ?", (code, now - self.ttl))
        return row is not None and hmac.compare_digest(row[0], digest)


# Redis: a room is a hash (digest, version, state) that expires ttl seconds after its last put; a sorted set of
# codes by last put counts the live rooms. Each write is one Lua script, atomic on the server.
CREATE_SCRIPT = """
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[3] - ARGV[4])
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[5]) then return -1 end
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'digest', ARGV[1], 'version', 0, 'state', '')
redis.call('EXPIRE', KEYS[1], ARGV[4])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
return 1
"""
UPDATE_SCRIPT = """
local held = redis.call('HMGET', KEYS[1], 'digest', 'version', 'state')
if not held[1] then return nil end
if held[1] ~= ARGV[1] then return -1 end
local version = tonumber(held[2])
if held[3] ~= ARGV[2] then
    version = version + 1
    redis.call('HSET', KEYS[1], 'version', version, 'state', ARGV[2])
end
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[5])
return version
"""
DELETE_SCRIPT = """
local digest = redis.call('HGET', KEYS[1], 'digest')
if not digest then return nil end
if digest ~= ARGV[1] then return -1 end
redis.call('DEL', KEYS[1], KEYS[3])
redis.call('ZREM', KEYS[2], ARGV[2])
return 1
"""
# The quiz: fields of the room's hash (quiz: the question's number, quiz_state, question), and a hash of answers,
# "number:session" -> right flag (0/1), the time, a space, then the answer's text, emptied when the next question is
# asked.
ASK_SCRIPT = """
local digest = redis.call('HGET', KEYS[1], 'digest')
if not digest then return nil end
if digest ~= ARGV[1] then return -1 end
local number = redis.call('HINCRBY', KEYS[1], 'quiz', 1)
redis.call('HSET', KEYS[1], 'quiz_state', 'open', 'question', ARGV[2])
redis.call('HINCRBY', KEYS[1], 'version', 1)
redis.call('DEL', KEYS[3])
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[5])
return number
"""
QUIZ_STATE_SCRIPT = """
local held = redis.call('HMGET', KEYS[1], 'digest', 'quiz')
if not held[1] then return nil end
if held[1] ~= ARGV[1] then return -1 end
if held[2] ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], 'quiz_state', ARGV[3])
redis.call('HINCRBY', KEYS[1], 'version', 1)
redis.call('EXPIRE', KEYS[1], ARGV[4])
redis.call('ZADD', KEYS[2], ARGV[5], ARGV[6])
return 1
"""
ANSWER_SCRIPT = """
local held = redis.call('HMGET', KEYS[1], 'digest', 'quiz', 'quiz_state')
if not held[1] then return nil end
if held[2] ~= ARGV[1] or held[3] ~= 'open' then return -2 end
local kept = redis.call('HSETNX', KEYS[2], ARGV[1] .. ':' .. ARGV[2], ARGV[3])
redis.call('EXPIRE', KEYS[2], ARGV[4])
return kept
"""


class RedisRooms(Rooms):
    """Rooms in Redis, for processes on several machines; Redis expires an idle room itself."""

    def __init__(self, client, **limits):
        super().__init__(**limits)
        self.client = client
        self._create = client.register_script(CREATE_SCRIPT)
        self._put = client.register_script(UPDATE_SCRIPT)
        self._remove = client.register_script(DELETE_SCRIPT)
        self._open = client.register_script(ASK_SCRIPT)
        self._change = client.register_script(QUIZ_STATE_SCRIPT)
        self._take = client.register_script(ANSWER_SCRIPT)
        self._live = REDIS_PREFIX + "rooms"

    def _room(self, code) -> str:
        return f"{REDIS_PREFIX}room:{code}"

    def _answers_key(self, code) -> str:
        return f"{REDIS_PREFIX}answers:{code}"

    def _insert(self, code, digest, now) -> bool:
        done = self._create(keys=[self._room(code), self._live],
                            args=[digest, code, now, int(self.ttl), self.max_rooms])
        if done == -1:
            raise RoomError("room.full", {"n": self.max_rooms})
        return done == 1

    def _update(self, code, digest, text, now):
        return self._put(keys=[self._room(code), self._live], args=[digest, text, int(self.ttl), now, code])

    def _delete(self, code, digest, now):
        return self._remove(keys=[self._room(code), self._live, self._answers_key(code)], args=[digest, code])

    def _version(self, code, now):
        version = self.client.hget(self._room(code), "version")
        return None if version is None else int(version)

    def _latest(self, code, now):
        version, state = self.client.hmget(self._room(code), "version", "state")
        return None if version is None else (int(version), state.decode())

    def _ask(self, code, digest, text, now):
        return self._open(keys=[self._room(code), self._live, self._answers_key(code)],
                          args=[digest, text, int(self.ttl), now, code])

    def _set_quiz_state(self, code, digest, number, state, now):
        return self._change(keys=[self._room(code), self._live], args=[digest, number, state, int(self.ttl), now, code])

    def _quiz(self, code, now):
        number, state, question = self.client.hmget(self._room(code), "quiz", "quiz_state", "question")
        return None if number is None else (int(number), state.decode(), question.decode())

    def _answer(self, code, number, session, text, right, now):
        return self._take(keys=[self._room(code), self._answers_key(code)],
                          args=[number, session, f"{int(right)}{now!r} {text}", int(self.ttl)])

    def _answer_of(self, code, number, session):
        held = self.client.hget(self._answers_key(code), f"{number}:{session}")
        return None if held is None else _redis_answer(held)

    def _tally(self, code, number):
        mine = f"{number}:".encode()
        return [_redis_answer(held) for field, held in self.client.hgetall(self._answers_key(code)).items()
                if field.startswith(mine)]

    def _is_teacher(self, code, digest, now):
        held = self.client.hget(self._room(code), "digest")
        return held is not None and hmac.compare_digest(held.decode(), digest)


def _redis_answer(held: bytes) -> tuple[str, str, str]:
    """An answer as Redis holds it: the right flag, the time, a space, the answer's text (_answers checks each)."""
    when, _, text = held[1:].decode().partition(" ")
    return text, held[:1].decode(), when


def redis_client(environ=os.environ):
    """The Redis client of TRANSFORMER_REDIS_URL, or None when it is not set (then each store uses its disk)."""
    url = environ.get("TRANSFORMER_REDIS_URL")
    if not url:
        return None
    import redis  # only a server that uses Redis needs the package loaded

    return redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5, health_check_interval=30)


def from_environment(environ=os.environ) -> Rooms:
    limits = {"ttl": float(environ.get("TRANSFORMER_ROOM_HOURS", 4)) * 3600}
    client = redis_client(environ)
    if client is not None:
        return RedisRooms(client, **limits)
    return SqliteRooms(environ.get("TRANSFORMER_ROOMS_DB") or DEFAULT_DB, **limits)
