"""The room store (ui/stores/rooms.py), on both backends: SQLite shared by two processes, and a real redis-server
(the `redis_url` fixture of conftest.py). A teacher's puts raise the version only when the state changes, students
read it; a wrong, forged or malformed key is refused with a message key, never an exception of another kind; an
idle room expires; a store full of rooms refuses another."""
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from conftest import examples  # noqa: E402
from ui.stores import rooms  # noqa: E402
from ui.stores.rooms import ALPHABET, CODE_LENGTH, Latest, RedisRooms, RoomError, SqliteRooms  # noqa: E402

QUERY = {"preset": "hello-world", "src": "Hello World", "tgt": "Hola Mundo", "head": "2"}


class Clock:
    def __init__(self):
        self.now = 1_000_000.0

    def __call__(self):
        return self.now


@pytest.fixture
def redis_client(redis_url):
    client = rooms.redis_client({"TRANSFORMER_REDIS_URL": redis_url})
    client.flushdb()
    return client


@pytest.fixture(params=["sqlite", pytest.param("redis", marks=pytest.mark.server)])
def store(request, tmp_path):
    if request.param == "sqlite":
        return SqliteRooms(tmp_path / "rooms.sqlite3")
    return RedisRooms(request.getfixturevalue("redis_client"))


def without_times(answers) -> list[tuple]:
    """The answers without the times they were given."""
    return [(answer.value, answer.right) for answer in answers]


def refusal(call) -> str:
    with pytest.raises(RoomError) as refused:
        call()
    return refused.value.args[0]


def test_a_new_room_has_a_short_code_and_a_secret_key(store):
    code, key = store.create()
    assert len(code) == CODE_LENGTH and set(code) <= set(ALPHABET) and rooms.normal_code(code.lower()) == code
    assert rooms.valid_key(key) and code not in key
    assert store.version(code) == 0 and store.latest(code) is None  # nothing put yet
    assert store.create()[1] != key


def test_the_teachers_puts_reach_the_students_and_the_version_moves_on_change_only(store):
    code, key = store.create()
    assert store.put(code, key, "attention", QUERY) == 1
    assert store.latest(code) == Latest(1, "attention", QUERY)
    assert store.put(code, key, "attention", QUERY) == 1  # a rerun that changed nothing
    assert store.put(code, key, "attention", {**QUERY, "head": "1"}) == 2
    assert store.put(code, key, "ffn", {**QUERY, "head": "1"}) == 3
    assert store.version(code) == 3 and store.latest(code) == Latest(3, "ffn", {**QUERY, "head": "1"})


@pytest.mark.parametrize("forged", ["", "x" * 22, "A" * 21, "A" * 23, "../../etc/passwd", "😀" * 22, None, 7])
def test_a_wrong_or_forged_key_is_refused_and_changes_nothing(store, forged):
    code, key = store.create()
    store.put(code, key, "attention", QUERY)
    other_code, other_key = store.create()
    for wrong in (forged, other_key):
        assert refusal(lambda: store.put(code, wrong, "ffn", {"src": "forged"})) == "room.wrong_key"
    assert store.latest(code) == Latest(1, "attention", QUERY)


@pytest.mark.parametrize("code", ["", "abc", "ABCDE", "A B", "ÄBCD", "OOOO", "1111", "AB'D", "A" * 10_000, None])
def test_a_malformed_code_is_no_room_for_students_or_teachers(store, code):
    assert store.version(code) is None and store.latest(code) is None
    assert refusal(lambda: store.put(code, "A" * 22, "ffn", QUERY)) == "room.bad_code"
    assert rooms.normal_code(code) is None


def test_the_teacher_closes_the_room_and_its_students_find_none(store):
    code, key = store.create()
    store.put(code, key, "attention", QUERY)
    other_code, other_key = store.create()
    for wrong in ("x" * 22, other_key, "forged"):  # only the room's key closes it
        assert refusal(lambda: store.close(code, wrong)) == "room.wrong_key"
    assert store.version(code) == 1 and store.latest(code) == Latest(1, "attention", QUERY)
    store.close(code, key)
    assert store.version(code) is None and store.latest(code) is None
    assert refusal(lambda: store.put(code, key, "ffn", QUERY)) == "room.gone"
    assert refusal(lambda: store.close(code, key)) == "room.gone"
    assert refusal(lambda: store.close("abc", key)) == "room.bad_code"
    assert store.version(other_code) == 0  # the other room lives on


def test_a_room_never_made_is_gone(store):
    code = next(c for c in ("ACEF", "HKMN") if store.version(c) is None)
    assert refusal(lambda: store.put(code, "A" * 22, "ffn", QUERY)) == "room.gone"


def test_a_state_bigger_than_a_link_is_refused(store):
    code, key = store.create()
    assert refusal(lambda: store.put(code, key, "ffn", {"src": "x" * rooms.MAX_QUERY_BYTES})) == "room.too_big"
    assert store.latest(code) is None


def test_malformed_contents_of_the_store_are_no_state():
    for text in ("", "[]", "{", '{"page": 1, "query": {}}', '{"page": "ffn", "query": {"a": 1}}'):
        assert rooms._decode(1, text) is None
    assert rooms._decode(2, '{"page": "ffn", "query": {"a": "b"}}') == Latest(2, "ffn", {"a": "b"})


def test_an_idle_sqlite_room_expires_and_a_used_one_does_not(tmp_path):
    clock = Clock()
    store = SqliteRooms(tmp_path / "rooms.sqlite3", ttl=60, clock=clock)
    idle, used = store.create(), store.create()
    clock.now += 50
    store.put(*used, "ffn", QUERY)
    clock.now += 20  # 70 s after the idle room's creation, 20 s after the used room's put
    assert store.version(idle[0]) is None and store.latest(idle[0]) is None
    assert refusal(lambda: store.put(*idle, "ffn", QUERY)) == "room.gone"
    assert store.version(used[0]) == 1


def test_an_idle_redis_room_expires(redis_client):
    store = RedisRooms(redis_client, ttl=1)
    code, key = store.create()
    assert 0 < redis_client.ttl(f"{rooms.REDIS_PREFIX}room:{code}") <= 1
    gone_by = time.monotonic() + 5  # Redis drops a key once its second has passed, on the next read
    while store.version(code) is not None:
        assert time.monotonic() < gone_by, "the idle room outlived its time"
        time.sleep(0.05)
    assert refusal(lambda: store.put(code, key, "ffn", QUERY)) == "room.gone"


def test_a_full_store_refuses_a_new_room_until_one_expires(tmp_path):
    clock = Clock()
    store = SqliteRooms(tmp_path / "rooms.sqlite3", ttl=60, max_rooms=3, clock=clock)
    for _ in range(3):
        store.create()
    assert refusal(store.create) == "room.full"
    clock.now += 61
    assert store.create()


def test_a_full_redis_store_refuses_a_new_room(redis_client):
    store = RedisRooms(redis_client, max_rooms=3)
    for _ in range(3):
        store.create()
    assert refusal(store.create) == "room.full"


CHILD = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r})
    from ui.stores.rooms import SqliteRooms
    store = SqliteRooms({path!r})
    for i in range({n}):
        store.put({code!r}, {key!r}, "ffn", {{"src": "child %d" % i}})
""")


def test_two_processes_share_sqlite_rooms_and_lose_no_put(tmp_path):
    """Another process reads the room this one made, and puts from both at once each raise the version once."""
    path, n = tmp_path / "rooms.sqlite3", 60
    store = SqliteRooms(path)
    code, key = store.create()
    child = subprocess.Popen([sys.executable, "-c", CHILD.format(root=str(ROOT), path=str(path), n=n, code=code,
                                                                  key=key)])
    for i in range(n):
        store.put(code, key, "attention", {"src": f"parent {i}"})
    assert child.wait(timeout=120) == 0
    assert store.version(code) == 2 * n  # every put changed the state (parent and child alternate or not)
    assert SqliteRooms(path).latest(code).query["src"] in (f"parent {n - 1}", f"child {n - 1}")
    assert (path.parent / "rooms.sqlite3-wal").exists()  # WAL mode: readers never wait for the writer


def test_the_environment_chooses_the_store(tmp_path, redis_url):
    assert isinstance(rooms.from_environment({"TRANSFORMER_ROOMS_DB": str(tmp_path / "r.db")}), SqliteRooms)
    chosen = rooms.from_environment({"TRANSFORMER_REDIS_URL": redis_url, "TRANSFORMER_ROOM_HOURS": "2"})
    assert isinstance(chosen, RedisRooms) and chosen.ttl == 7200


@settings(max_examples=examples(300), deadline=None)
@given(code=st.text(max_size=40) | st.sampled_from(["ACEF", "acef", " ACEF ", "ACEF\x00"]),
       key=st.text(max_size=40) | st.from_regex(rooms.KEY, fullmatch=True))
def test_any_text_as_code_or_key_is_refused_with_a_message_key(tmp_path_factory, code, key):
    """What a link or a forged message may carry: never an exception but RoomError, never a write."""
    store = SqliteRooms(tmp_path_factory.getbasetemp() / "hostile.sqlite3")
    assert store.version(code) is None or rooms.CODE.fullmatch(code)
    normal = rooms.normal_code(code)
    assert normal is None or rooms.CODE.fullmatch(normal)
    with pytest.raises(RoomError) as refused:
        store.put(code, key, "ffn", QUERY)
    assert refused.value.args[0] in ("room.bad_code", "room.wrong_key", "room.gone")


# The class quiz (ui/stores/rooms.py's ask, set_quiz_state, answer, tally), on both backends.
QUESTION = {"kind": "score", "cell": [0, 1], "answer": 1.25, "tolerance": 0.01}


def test_a_question_is_asked_answered_once_per_session_closed_and_revealed(store):
    code, key = store.create()
    store.put(code, key, "attention", QUERY)
    before = store.version(code)
    assert store.quiz(code) is None
    number = store.ask(code, key, QUESTION)
    assert number == 1 and store.version(code) == before + 1  # the students' pages wake
    assert store.quiz(code) == rooms.Quiz(1, QUESTION, "open")
    assert store.answer(code, 1, "student-a", 1.25, True)
    assert store.answer(code, 1, "student-b", "7", False)
    assert not store.answer(code, 1, "student-a", 3.0, False)  # a second answer: the first stays
    assert store.version(code) == before + 1  # answers wake no one
    assert sorted(without_times(store.tally(code, 1, key)), key=str) == [("7", False), (1.25, True)]
    store.set_quiz_state(code, key, 1, "closed")
    assert refusal(lambda: store.answer(code, 1, "student-c", 1.25, True)) == "quiz.closed"
    assert refusal(lambda: store.tally(code, 1, None)) == "room.wrong_key"
    store.set_quiz_state(code, key, 1, "revealed")
    assert store.quiz(code).state == "revealed" and store.version(code) == before + 3
    assert len(store.tally(code, 1)) == 2  # everyone's once revealed
    store.set_quiz_state(code, key, 1, "put_away")
    assert store.quiz(code).state == "put_away" and store.version(code) == before + 4


def test_the_next_question_forgets_the_answers_and_refuses_answers_to_the_last(store):
    code, key = store.create()
    store.ask(code, key, QUESTION)
    store.answer(code, 1, "student-a", 1.0, False)
    assert store.ask(code, key, {"kind": "pe"}) == 2
    assert store.tally(code, 2, key) == []
    assert refusal(lambda: store.answer(code, 1, "student-b", 1.0, False)) == "quiz.closed"
    assert refusal(lambda: store.tally(code, 1, key)) == "quiz.gone"
    assert refusal(lambda: store.set_quiz_state(code, key, 1, "revealed")) == "quiz.gone"
    assert store.answer(code, 2, "student-a", 2.0, True)


@pytest.mark.parametrize("forged", ["", "x" * 22, None, 7])
def test_only_the_teachers_key_asks_closes_and_reveals(store, forged):
    code, key = store.create()
    store.ask(code, key, QUESTION)
    version = store.version(code)
    assert refusal(lambda: store.ask(code, forged, {"kind": "forged"})) == "room.wrong_key"
    assert refusal(lambda: store.set_quiz_state(code, forged, 1, "revealed")) == "room.wrong_key"
    assert refusal(lambda: store.tally(code, 1, forged)) == "room.wrong_key"
    assert store.quiz(code) == rooms.Quiz(1, QUESTION, "open") and store.version(code) == version


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"), "", "x" * 65, "x" * 10_000, None, True,
                                   [1.0], {"a": 1}, pytest.param(10**400, id="10**400"),
                                   pytest.param(-(10**309), id="-10**309")])
def test_a_forged_answer_is_refused_and_kept_nowhere(store, value):
    code, key = store.create()
    store.ask(code, key, QUESTION)
    assert refusal(lambda: store.answer(code, 1, "student-a", value, True)) == "quiz.bad_answer"
    assert store.tally(code, 1, key) == []


@pytest.mark.parametrize("code, number, session", [("ZZZZ", 1, "s"), ("A" * 10_000, 1, "s"), (None, 1, "s"),
                                                   ("<code>", 2, "s"), ("<code>", 1, ""), ("<code>", 1, "x" * 65),
                                                   ("<code>", 1, "../a")])
def test_a_forged_room_question_or_session_is_refused(store, code, number, session):
    real, key = store.create()
    store.ask(real, key, QUESTION)
    code = real if code == "<code>" else code
    assert refusal(lambda: store.answer(code, number, session, 1.0, True)) in {"room.gone", "quiz.closed"}
    assert store.tally(real, 1, key) == []


def test_the_quiz_ends_with_its_room(store):
    code, key = store.create()
    store.ask(code, key, QUESTION)
    store.answer(code, 1, "student-a", 1.0, True)
    store.close(code, key)
    assert store.quiz(code) is None
    assert refusal(lambda: store.answer(code, 1, "student-b", 1.0, True)) == "room.gone"


def test_malformed_quizzes_and_answers_in_the_store_are_none():
    assert rooms._quiz((1, "open", "not json")) is None and rooms._quiz((1, "opened", "{}")) is None
    assert rooms._answers([("NaN", "1", 5), ("[1]", "1", 5), ("true", "0", 5), ("1.5", "x", 5), ('"a"', 1, "5")]) == [
        rooms.Answer(1.5, False, 5.0), rooms.Answer("a", True, 5.0)]
    # a store is shared: an integer too large for a float, or a number written with 10,000 digits, is no answer
    assert rooms._answers([("1" * 400, "1", 5), ("-" + "9" * 5000, "1", 5), ("1e999", "1", 5), ("3", "1", 5)]) == [
        rooms.Answer(3.0, True, 5.0)]
    # nor is one whose time is not a finite number
    assert rooms._answers([("1", "1", "x"), ("1", "1", None), ("1", "1", "inf"), ("1", "1", 10**400)]) == []


def test_a_students_own_answer_and_its_time_come_back_from_the_store(store):
    """A reload, or a browser moved to another process, asks the room for the student's own answer (answer_of); the
    teacher's export reads each answer's time (the store's clock, when the first answer came)."""
    clock = Clock()
    store.clock = clock
    code, key = store.create()
    store.ask(code, key, QUESTION)
    assert store.answer_of(code, 1, "student-a") is None
    store.answer(code, 1, "student-a", 1.25, True)
    clock.now += 7.5
    store.answer(code, 1, "student-b", "7", False)
    assert not store.answer(code, 1, "student-a", 3.0, False)  # a second answer: the first, and its time, stay
    assert store.answer_of(code, 1, "student-a") == rooms.Answer(1.25, True, 1_000_000.0)
    assert store.answer_of(code, 1, "student-b") == rooms.Answer("7", False, 1_000_007.5)
    assert sorted(store.tally(code, 1, key), key=str) == [rooms.Answer("7", False, 1_000_007.5),
                                                          rooms.Answer(1.25, True, 1_000_000.0)]
    for code_, number, session in (("ZZZZ", 1, "student-a"), (code, 2, "student-a"), (code, 1, "student-c"),
                                   (code, 1, "../a"), (code, 1, ""), (None, 1, "student-a")):
        assert store.answer_of(code_, number, session) is None
    store.ask(code, key, QUESTION)
    assert store.answer_of(code, 1, "student-a") is None  # the next question forgot them


def test_an_answers_table_made_before_answers_had_a_time_gets_one(tmp_path):
    import sqlite3

    path = tmp_path / "rooms.sqlite3"
    with sqlite3.connect(path) as old:
        old.execute("CREATE TABLE answers (code TEXT NOT NULL, number INTEGER NOT NULL, session TEXT NOT NULL, "
                    "answer TEXT NOT NULL, right INTEGER NOT NULL, PRIMARY KEY (code, number, session))")
    store = SqliteRooms(path)
    code, key = store.create()
    store.ask(code, key, QUESTION)
    assert store.answer(code, 1, "student-a", 1.25, True)
    kept = store.answer_of(code, 1, "student-a")
    assert kept[:2] == (1.25, True) and abs(kept.time - time.time()) < 60
