"""The class quiz's part of a session: a room's teacher asks the class one of the exercises page's by-hand questions
(`ask`), closes it to answers and reveals it (`set_state`); each student in the room answers once on their own
screen (`send`); the spread of the answers for the teacher's screen (`spread`). ui/stores/rooms.py keeps the quiz
with its room; ui/lessons/exercise_views.py draws it (quiz_panel, at the top of every page). Asking, closing and
revealing raise the room's version, so a student's page wakes as for a change of the teacher's page (follow.py
reruns the whole app when the question moved); answers wake no one. A student's typed answer is read as a number
only (engine.exercises.read_number) and checked by the student's process against the question as the room holds
it."""
from __future__ import annotations

import dataclasses
import math
import secrets
from collections import Counter

import streamlit as st

from engine import exercises as ex
from ui.classroom import follow
from ui.core.format import fmt
from ui.stores.rooms import Answer, Quiz

ANSWERER = "quiz.answerer"  # session_state: this session's id for its answers (one answer per session and question)
MINE = "quiz.mine.{code}.{number}"  # session_state: this session's answer to a question of a room (a Verdict)
REFUSED = "quiz.refused"  # session_state: why the last answer typed was not sent (a catalog key and its values)
TALLY_SECONDS = 1.0  # the teacher's view reads the tally this often while the question is open
SPREAD_BARS = 8  # the most frequent answers drawn as bars; the rest are one bar, "other"


def stored(q: ex.Question) -> dict:
    """A question as the room keeps it."""
    return dataclasses.asdict(q)


def question_of(held: dict) -> ex.Question | None:
    """The question the room holds, if it has a question's form (a store is shared: read it as untrusted)."""
    try:
        kind, _ = ex.parse_question_id(held["id"])
        numbers = [held["answer"], held["tolerance"], *held["index"]]
        well_formed = (kind == held["kind"] and isinstance(held["step"], str) and isinstance(held["given"], dict)
                       and all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
                               for x in numbers) and all(isinstance(i, int) for i in held["index"]))
    except (KeyError, TypeError, ValueError):
        return None
    if not well_formed:
        return None
    return ex.Question(held["id"], kind, held["step"], tuple(held["index"]), held["given"], float(held["answer"]),
                       float(held["tolerance"]))


def spread(answers: list[Answer], digits: int) -> list[tuple[str, int, bool]]:
    """The answers as bars: (an answer as written with `digits` significant digits, how many gave it, whether it is
    right), the most frequent first; past SPREAD_BARS, one bar for the rest ("…", right if all of them are)."""
    counts, right = Counter(), {}
    for answer in answers:
        label = fmt(answer.value, digits) if isinstance(answer.value, (int, float)) else str(answer.value)
        counts[label] += 1
        right[label] = right.get(label, True) and answer.right
    ranked = counts.most_common()
    shown = [(label, n, right[label]) for label, n in ranked[:SPREAD_BARS]]
    rest = ranked[SPREAD_BARS:]
    if rest:
        shown.append(("…", sum(n for _, n in rest), all(right[label] for label, _ in rest)))
    return shown


def room() -> dict:
    """This session's room (follow.ROOM): {} outside one."""
    return st.session_state.get(follow.ROOM) or {}


def current() -> tuple[Quiz, ex.Question] | None:
    """The room's question as the room holds it, and as a question; None outside a room or without one. Noted as
    the one this session shows (follow.catch_up_on_page compares)."""
    code = room().get("code")
    quiz = follow.from_store(lambda: follow.store().quiz(code), []) if code else None
    st.session_state[follow.QUIZ_SHOWN] = None if quiz is None else (quiz.number, quiz.state)
    q = None if quiz is None else question_of(quiz.question)
    return None if q is None else (quiz, q)


def tally(number: int) -> list[Answer]:
    """The answers to question `number`: the teacher's view, or everyone's once revealed ([] if refused)."""
    here = room()
    return follow.from_store(lambda: follow.store().tally(here["code"], number, here.get("key")), []) or []


def ask(q: ex.Question) -> None:
    """A teacher's button: the question to the class."""
    here = room()
    _teachers(lambda: follow.store().ask(here["code"], here["key"], stored(q)))


def set_state(number: int, state: str) -> None:
    """A teacher's button: question `number` closed to answers, or revealed."""
    here = room()
    _teachers(lambda: follow.store().set_quiz_state(here["code"], here["key"], number, state))


def _teachers(call) -> None:
    follow.from_store(call, st.session_state.setdefault(follow.NOTES, []))
    follow.watcher().nudge()


def mine(number: int) -> ex.Verdict | None:
    """This session's answer to question `number` of its room, if it sent one."""
    return st.session_state.get(MINE.format(code=room().get("code"), number=number))


def send(number: int, q: ex.Question, typed) -> None:
    """A student's answer: read as a number and checked; kept in the room if it is one (this session's first), else
    why not in REFUSED."""
    verdict = ex.check(q, typed)
    if not verdict.answered:
        st.session_state[REFUSED] = (f"ex.refused.{verdict.code}", {"n": ex.MAX_ANSWER_CHARS})
        return
    code, notes = room()["code"], []
    answerer = st.session_state.setdefault(ANSWERER, secrets.token_urlsafe(12))
    follow.from_store(lambda: follow.store().answer(code, number, answerer, verdict.value, verdict.right), notes)
    if notes:
        st.session_state[REFUSED] = notes[0]
        return
    st.session_state[MINE.format(code=code, number=number)] = verdict
