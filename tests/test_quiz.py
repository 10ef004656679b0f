"""The class quiz (ui/classroom/quiz.py, drawn by ui/classroom/quiz_views.quiz_panel): a question goes to the room
and back unchanged, a malformed one is none, the spread of answers; and at the protocol level (bench/protocol.py):
a teacher asks a by-hand question from the exercises page, students in English and Chinese answer on their own
screens (a typed expression refused, one answer per session), the teacher's screen counts them every second, and the
reveal wakes every student with the answer; a student's forged click on the teacher's buttons changes nothing, with
the rooms in SQLite and in Redis; and the whole class in Chromium."""
import asyncio
import csv
import io
import json
import math
import sys
import time
import urllib.parse
import urllib.request
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from conftest import app_server, examples, in_own_thread  # noqa: E402
from protocol import Session  # noqa: E402
from test_browser import LOCALES, settle  # noqa: E402
from test_follow import TIMEOUT, done, query, shown, woken  # noqa: E402
from test_follow_browser import BUTTON, FOLLOWED_WITHIN, SCREEN, wait_until  # noqa: E402
from test_rooms import without_times  # noqa: E402

import engine  # noqa: E402
from engine import exercises as ex  # noqa: E402
from ui.classroom import quiz  # noqa: E402
from ui.core.format import DIGITS_RANGE, fmt  # noqa: E402
from ui.core.i18n import literal, translator  # noqa: E402
from ui.stores import rooms  # noqa: E402
from ui.stores.rooms import Answer  # noqa: E402

EN, ZH = translator("en"), translator("zh")
BLUE, RED = "rgb(31, 119, 180)", "rgb(214, 39, 40)"  # figures.bars' bars and its highlighted one


def hello_world_questions() -> list[ex.Question]:
    return ex.question_set(engine.preset("hello-world").run("Hello World", "Hola Mundo"), 1)  # the app's default


def test_a_question_goes_to_the_room_and_back_unchanged():
    questions = hello_world_questions()
    assert len(questions) >= 5
    for q in questions:
        back = quiz.question_of(json.loads(json.dumps(quiz.stored(q))))
        assert back == q and back.answer == q.answer and back.tolerance == q.tolerance
        assert back.given == json.loads(json.dumps(q.given))  # its vectors as lists


@pytest.mark.parametrize("change", [
    {"id": "nope-1"}, {"id": "score-1000"}, {"kind": "pe"}, {"answer": math.nan}, {"answer": "1.0"},
    {"tolerance": math.inf}, {"index": [0, "1"]}, {"index": [True]}, {"given": []}, {"step": 3}, {"id": None}])
def test_a_malformed_question_in_the_store_is_none(change):
    held = quiz.stored(hello_world_questions()[0]) | change
    assert quiz.question_of(held) is None
    assert quiz.question_of({"id": "score-1"}) is None and quiz.question_of({}) is None


def a_question(answer: float) -> ex.Question:
    return ex.Question("score-1", "score", "enc.0.attn.scores", (0, 0, 1), {}, answer, ex.tolerance(answer))


def test_the_spread_is_a_histogram_whose_outliers_do_not_crush_its_bins():
    """58 answers 0.21, 0.22, …, 0.78 and two of 10⁹: bins 0.05 wide from 0.2 to 0.8, the 10⁹s past them; the answer
    0.5 (right within 0.005, so only the 0.5 is right) in [0.5, 0.55)."""
    q = a_question(0.5)
    near = [round(0.21 + 0.01 * i, 2) for i in range(58)]
    answers = [Answer(v, abs(v - q.answer) <= q.tolerance) for v in near] + [Answer(1e9, False)] * 2
    middle = [quiz.Bin(f"[{fmt(0.25 + 0.05 * i, 4)}, {fmt(0.3 + 0.05 * i, 4)})", 5, i == 5) for i in range(10)]
    assert quiz.spread(answers, q, 4, "NaN") == [
        quiz.Bin("[0.2, 0.25)", 4, False), *middle, quiz.Bin("[0.75, 0.8]", 4, False), quiz.Bin("> 0.8", 2, False)]
    assert middle[5].label == "[0.5, 0.55)" and sum(answer.right for answer in answers) == 1


def test_the_spread_of_one_number_a_text_and_outliers_below():
    q = a_question(-0.125)
    assert quiz.spread([Answer(-0.125, True)] * 3, q, 4, "NaN") == [quiz.Bin("−0.125", 3, True)]
    assert quiz.spread([Answer(2, False)], q, 4, "NaN") == [quiz.Bin("2", 1, False)]
    assert quiz.spread([Answer("7", False), Answer(1.0, False)], q, 4, "not a number") == [
        quiz.Bin("1", 1, False), quiz.Bin("not a number", 1, False)]  # a store may hold a text
    answers = [Answer(-0.125, True)] * 10 + [Answer(-0.1, False)] * 10 + [Answer(-1e300, False)]
    assert quiz.spread(answers, q, 4, "NaN") == [  # −0.13 to −0.1 (−0.125 ± 0.005 and the −0.1s) in 6 bins
        quiz.Bin("< −0.13", 1, False), quiz.Bin("[−0.13, −0.125)", 0, False), quiz.Bin("[−0.125, −0.12)", 10, True),
        quiz.Bin("[−0.12, −0.115)", 0, False), quiz.Bin("[−0.115, −0.11)", 0, False),
        quiz.Bin("[−0.11, −0.105)", 0, False), quiz.Bin("[−0.105, −0.1]", 10, False)]
    assert quiz.spread([], q, 4, "NaN") == []


@settings(max_examples=examples(200))
@given(values=hst.lists(hst.floats(allow_nan=False, allow_infinity=False) | hst.just(0.5), min_size=1),
       answer=hst.floats(-1e6, 1e6), digits=hst.integers(*DIGITS_RANGE))
def test_the_spread_counts_every_answer_once_in_bins_told_apart(values, answer, digits):
    bins = quiz.spread([Answer(v, False) for v in values], a_question(answer), digits, "NaN")
    assert sum(b.count for b in bins) == len(values) and len({b.label for b in bins}) == len(bins)
    assert len(bins) <= quiz.SPREAD_BINS + 3 and sum(b.contains_answer for b in bins) <= 1


def test_the_answers_export_in_time_order_and_a_formula_stays_text():
    """The teacher's CSV: answer, right (1 or 0: a column's sum), time (UTC, ISO 8601); a text a store holds that a
    spreadsheet would run as a formula is kept as text."""
    answers = [Answer(0.25, False, 1_700_000_060.9), Answer(0.5, True, 1_700_000_000.0), Answer("=1+1", False, 1e9)]
    assert quiz.answers_csv(answers, ("answer", "right", "time")).splitlines() == [
        "answer,right,time", "'=1+1,0,2001-09-09T01:46:40Z", "0.5,1,2023-11-14T22:13:20Z",
        "0.25,0,2023-11-14T22:14:20Z"]


@pytest.fixture(scope="module", params=["sqlite", pytest.param("redis", marks=pytest.mark.server)])
def server(request, tmp_path_factory):
    """The app with its rooms in SQLite, or in a real Redis; the store as the test reads it."""
    directory = tmp_path_factory.mktemp("quiz")
    if request.param == "sqlite":
        env = {"TRANSFORMER_ROOMS_DB": str(directory / "rooms.sqlite3")}
        store = rooms.SqliteRooms(directory / "rooms.sqlite3")
    else:
        env = {"TRANSFORMER_REDIS_URL": request.getfixturevalue("redis_url")}
        store = rooms.RedisRooms(rooms.redis_client(env))
    with app_server(directory / "streamlit.log", env) as url:
        yield url, store


async def teachers_room(url: str) -> tuple[Session, str, str]:
    """A teacher on the exercises page's by-hand questions, with a room open."""
    teacher = await Session.open(url, "exercises", timeout=TIMEOUT)
    assert await teacher.open_expander(r"room\.panel", TIMEOUT)
    await teacher.click(r"room\.open", TIMEOUT)
    assert await teacher.open_tab(r"ex\.tab", EN("ex.tab.hand"), TIMEOUT)
    link = query(teacher)
    return teacher, link["room"], link["key"]


async def answer(student: Session, number: int, text: str):
    student.set_widget(student.last.widget(rf"quiz\.typed\.{number}")[1].id, string_value=text)
    return await student.click(r"quiz\.send", TIMEOUT)


def test_a_class_answers_a_question_and_sees_the_answer_revealed(server):
    url, store = server
    q = next(q for q in hello_world_questions() if q.kind == "weight")

    async def scenario():
        teacher, code, key = await teachers_room(url)
        english = await Session.open(url, "", query_string=f"room={code}", timeout=TIMEOUT)
        chinese = await Session.open(url, "", query_string=f"room={code}", locale="zh-CN", timeout=TIMEOUT)
        try:
            assert english.last.widget(r"quiz\.typed\.1") is None  # no question yet
            await teacher.click(rf"quiz\.ask\.{q.id}", TIMEOUT)
            assert store.quiz(code) == rooms.Quiz(1, json.loads(json.dumps(quiz.stored(q))), "open")
            assert teacher.auto_reruns  # the teacher's count, read again every second
            for student in (english, chinese):
                run = await woken(student)
                assert done(run) and student.last.widget(r"quiz\.typed\.1") is not None

            run = await answer(english, 1, "0.4 + 0.1")  # an expression: refused, with the reason, nothing kept
            assert EN("ex.refused.expression", n=ex.MAX_ANSWER_CHARS) in shown(english)
            assert store.tally(code, 1, key) == []
            typed = f"{q.answer:.6g}"
            await answer(english, 1, typed)
            assert EN("quiz.yours", answer=fmt(float(typed), 6)) in shown(english)
            assert english.last.widget(r"quiz\.typed\.1") is None  # one answer: the field is gone
            await answer(chinese, 1, "12345")
            assert ZH("quiz.yours", answer=fmt(12345.0, 6)) in shown(chinese)
            assert sorted(without_times(store.tally(code, 1, key))) == [(float(typed), True), (12345.0, False)]

            fragment = next(f for f, seconds in teacher.auto_reruns.items() if seconds == quiz.TALLY_SECONDS)
            await teacher.auto_rerun(fragment, TIMEOUT)
            assert EN("quiz.count", n=2) in shown(teacher)
            exported = teacher.last.widget(r"quiz\.export")[1]  # the teacher's download of the answers, in time order
            with urllib.request.urlopen(url + exported.url, timeout=TIMEOUT) as csv_file:
                rows = list(csv.reader(io.StringIO(csv_file.read().decode("utf-8-sig"))))
            header = [EN("quiz.csv.answer"), EN("quiz.csv.right"), EN("quiz.csv.time")]
            assert rows[0] == header and [row[:2] for row in rows[1:]] == [[repr(float(typed)), "1"], ["12345.0", "0"]]
            assert all(abs(datetime.fromisoformat(row[2]).timestamp() - time.time()) < 600 for row in rows[1:])
            await teacher.click(r"quiz\.reveal", TIMEOUT)
            assert store.quiz(code).state == "revealed"
            for student, t, right in ((english, EN, True), (chinese, ZH, False)):
                run = await woken(student)
                assert done(run)
                assert t("quiz.answer", answer=fmt(q.answer, 6), tolerance=fmt(q.tolerance, 2)) in shown(student)
                assert t("quiz.right", right=1, share=fmt(50.0, 3)) in " ".join(shown(student).split(" · "))
                assert (t("ex.right") if right else t("quiz.wrong")) in shown(student)
            await teacher.click(r"quiz\.put_away", TIMEOUT)  # the class moves on: the question leaves every screen
            assert store.quiz(code).state == "put_away" and teacher.last.widget(r"quiz\.put_away") is None
            for student in (english, chinese):
                await woken(student)
                assert EN("quiz.count", n=2) not in shown(student) and ZH("quiz.count", n=2) not in shown(student)
        finally:
            await asyncio.gather(teacher.close(), english.close(), chinese.close())

    in_own_thread(scenario)


def test_a_students_forged_clicks_on_the_teachers_buttons_change_nothing(server):
    url, store = server

    async def scenario():
        teacher, code, key = await teachers_room(url)
        student = await Session.open(url, "", query_string=f"room={code}", timeout=TIMEOUT)
        try:
            q = next(q for q in hello_world_questions() if q.kind == "score")
            await teacher.click(rf"quiz\.ask\.{q.id}", TIMEOUT)
            await woken(student)
            reveal = teacher.last.widget(r"quiz\.reveal")[1].id
            ask = teacher.last.widget(r"quiz\.ask\.scaled-1")[1].id
            version = store.version(code)
            for forged in (reveal, ask):
                student.set_widget(forged, trigger_value=True)
                run = await student.rerun(TIMEOUT)
                assert not run.exceptions
            assert store.quiz(code) == rooms.Quiz(1, json.loads(json.dumps(quiz.stored(q))), "open")
            assert store.version(code) == version
            typed, send = (student.last.widget(pattern)[1].id for pattern in (r"quiz\.typed\.1", r"quiz\.send"))
            await answer(student, 1, "1")
            student.set_widget(typed, string_value="2")  # the form again, though the page no longer shows it
            student.set_widget(send, trigger_value=True)
            assert not (await student.rerun(TIMEOUT)).exceptions
            right = abs(1.0 - q.answer) <= q.tolerance
            assert without_times(store.tally(code, 1, key)) == [(1.0, right)]  # the first only
            assert EN("quiz.yours", answer=fmt(1.0, 6)) in shown(student)  # the room's, not the refused second
            assert EN("quiz.yours", answer=fmt(2.0, 6)) not in shown(student)
        finally:
            await asyncio.gather(teacher.close(), student.close())

    in_own_thread(scenario)


def test_a_students_answer_and_verdict_come_back_after_a_reload(server):
    """A student's id is in its link (me=): a reload of the same link is the same student, whose answer the room
    gives back (no empty field, no second answer counted) and whose verdict shows at the reveal. A link's forged id
    is named in a note and replaced by a new one."""
    url, store = server
    q = next(q for q in hello_world_questions() if q.kind == "weight")

    async def scenario():
        teacher, code, key = await teachers_room(url)
        student = await Session.open(url, "", query_string=f"room={code}", timeout=TIMEOUT)
        forger = await Session.open(url, "", query_string=f"room={code}&follow=0&me=%3Cb%3Ex%3C%2Fb%3E",
                                    timeout=TIMEOUT)  # detached: its first run's notes are not replaced by a switch
        reloaded = None
        try:
            me = query(student)["me"]
            assert rooms.valid_answerer(me) and "me" not in query(teacher)  # the teacher's link, and the room's, have
            assert "me" not in store.latest(code).query  # no student's id
            assert EN("msg.url", detail=literal("me='<b>x</b>'")) in shown(forger)  # as text
            assert rooms.valid_answerer(query(forger)["me"]) and query(forger)["me"] != me
            await teacher.click(rf"quiz\.ask\.{q.id}", TIMEOUT)
            await woken(student)
            typed, send = (student.last.widget(pattern)[1].id for pattern in (r"quiz\.typed\.1", r"quiz\.send"))
            await answer(student, 1, "1")
            assert query(student)["me"] == me
            reloaded = await Session.open(url, student.page, query_string=student.query_string, timeout=TIMEOUT)
            assert reloaded.last.widget(r"quiz\.typed\.1") is None  # answered: no empty field
            assert EN("quiz.yours", answer=fmt(1.0, 6)) in shown(reloaded)
            reloaded.set_widget(typed, string_value="2")  # a second answer, forged: the room keeps the first
            reloaded.set_widget(send, trigger_value=True)
            assert not (await reloaded.rerun(TIMEOUT)).exceptions
            assert without_times(store.tally(code, 1, key)) == [(1.0, abs(1.0 - q.answer) <= q.tolerance)]
            await teacher.click(r"quiz\.reveal", TIMEOUT)
            await woken(reloaded)
            verdict = EN("ex.right") if abs(1.0 - q.answer) <= q.tolerance else EN("quiz.wrong")
            assert f"{EN('quiz.yours', answer=fmt(1.0, 6))} · {verdict}" in shown(reloaded)
        finally:
            await asyncio.gather(*(s.close() for s in (teacher, student, forger, reloaded) if s is not None))

    in_own_thread(scenario)


def test_a_class_quiz_in_chromium(chromium, tmp_path):
    """A teacher (English) and two students (English, Chinese) at 1280 x 720 on one server: the teacher opens a room
    and asks the first by-hand question; each student types an answer on their own screen; the teacher's count reaches
    2 with no click; the reveal shows every student the answer."""
    shots = ROOT / "build" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    env = {"TRANSFORMER_ROOMS_DB": str(tmp_path / "rooms.sqlite3")}
    q = hello_world_questions()[0]
    with app_server(tmp_path / "streamlit.log", env) as url:
        contexts = [chromium.new_context(viewport=SCREEN, locale=LOCALES[lang]) for lang in ("en", "en", "zh")]
        try:
            teacher, *students = (context.new_page() for context in contexts)
            teacher.goto(f"{url}/exercises")
            teacher.get_by_role("button", name=EN("room.open")).first.click()
            wait_until(teacher, lambda: "key=" in teacher.url, "the teacher's room")
            code = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(teacher.url).query))["room"]
            teacher.locator(f".st-key-ex-tab {BUTTON}").nth(1).click()  # compute it by hand
            teacher.locator(f".st-key-quiz-ask-{q.id}").get_by_role("button").click()
            teacher.get_by_text(EN("quiz.count", n=0)).wait_for(timeout=FOLLOWED_WITHIN * 1000)
            for n, (student, t, typed) in enumerate(zip(students, (EN, ZH), (f"{q.answer:.6g}", "1"))):
                student.goto(f"{url}/?room={code}")
                # the quiz's own field: the exercises page's fields have its label, and may be drawn before it
                student.locator(".st-key-quiz-students_box").get_by_label(t("ex.answer.number")).fill(typed)
                student.get_by_role("button", name=t("quiz.send")).click()
                try:
                    student.get_by_text(t("quiz.yours", answer=fmt(float(typed), 6))).wait_for(
                        timeout=FOLLOWED_WITHIN * 1000)
                except Exception:  # the answer not shown: keep the student's screen for the failure's report
                    student.screenshot(path=shots / f"quiz-student-{n}-missed.png", full_page=True)
                    raise
            teacher.get_by_text(EN("quiz.count", n=2)).wait_for(timeout=FOLLOWED_WITHIN * 1000)  # no click: live
            teacher.locator('[data-testid="stMain"]').evaluate("main => main.scrollTo(0, 0)")
            teacher.screenshot(path=shots / "quiz-teacher.png")
            teacher.get_by_role("button", name=EN("quiz.reveal")).click()
            teacher.get_by_role("button", name=EN("quiz.put_away")).wait_for(timeout=FOLLOWED_WITHIN * 1000)
            class_answers = [Answer(float(f"{q.answer:.6g}"), True), Answer(1.0, False)]
            bins = quiz.spread(class_answers, q, 4, EN("quiz.not_a_number"))  # 0 to 250 by 25: 1 in the first, last
            assert [b.count for b in bins] == [1] + [0] * 8 + [1] and bins[-1].contains_answer
            drawn = teacher.locator(".js-plotly-plot").first
            drawn.locator(".bars path").nth(len(bins) - 1).wait_for(timeout=FOLLOWED_WITHIN * 1000)
            ticks = drawn.locator(".ytick text").all_text_contents()  # drawn from the reversed axis' far end
            assert ticks[::-1] == [b.label for b in bins]
            assert drawn.locator(".xtick text").count() == 0  # counts: each bar's number, no axis of 0.2 answers
            fills = [path.evaluate("bar => getComputedStyle(bar).fill") for path in drawn.locator(".bars path").all()]
            assert fills == [BLUE] * (len(bins) - 1) + [RED]  # the answer's bin, once revealed
            teacher.locator('[data-testid="stMain"]').evaluate("main => main.scrollTo(0, 0)")
            teacher.screenshot(path=shots / "quiz-teacher-revealed.png")
            for student, t, verdict in zip(students, (EN, ZH), ("ex.right", "quiz.wrong")):
                student.get_by_text(t("quiz.answer", answer=fmt(q.answer, 6), tolerance=fmt(q.tolerance, 2)).replace(
                    "**", "")).wait_for(timeout=FOLLOWED_WITHIN * 1000)
                assert t(verdict) in student.locator('[data-testid="stMain"]').inner_text()
            settle(students[1])
            students[1].screenshot(path=shots / "quiz-student-zh.png")
        finally:
            for context in contexts:
                context.close()


def test_the_teachers_answered_exercises_stay_the_teachers(server):
    """The exercises answered (done= in the link) are each participant's own: the room gets the teacher's page and
    link without them, so a following student does not take the teacher's score."""
    url, store = server

    async def scenario():
        teacher = await Session.open(url, "exercises", query_string="done=score-1:1", timeout=TIMEOUT)
        try:
            assert await teacher.open_expander(r"room\.panel", TIMEOUT)
            await teacher.click(r"room\.open", TIMEOUT)
            assert query(teacher)["done"] == "score-1:1"
            latest = store.latest(query(teacher)["room"])
            assert latest.page == "exercises" and "done" not in latest.query
        finally:
            await teacher.close()

    in_own_thread(scenario)
