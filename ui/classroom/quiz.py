"""The class quiz's part of a session: a room's teacher asks the class one of the exercises page's by-hand questions
(`ask`), closes it to answers and reveals it (`set_state`); each student in the room answers once on their own
screen (`send`), under the student's id in its link (following.Following.me): a reload, or a browser moved to another
process, finds the answer and its verdict again in the room (`mine`); the spread of the answers for the teacher's
screen (`spread`). ui/stores/rooms.py keeps the quiz
with its room; ui/classroom/quiz_views.py draws it (at the top of every page). Asking, closing and
revealing raise the room's version, so a student's page wakes as for a change of the teacher's page (follow.py
reruns the whole app when the question moved); answers wake no one. A student's typed answer is read as a number
only (engine.exercises.read_number) and checked by the student's process against the question as the room holds
it."""
from __future__ import annotations

import csv
import dataclasses
import io
import math
from datetime import datetime, timezone
from typing import NamedTuple

import numpy as np

from engine import exercises as ex
from ui.classroom import follow, scroll
from ui.core import session_store
from ui.core.format import fmt
from ui.stores.rooms import Answer, Quiz

REFUSED = "quiz.refused"  # session_state: why the last answer typed was not sent (a catalog key and its values)
MOVED = "quiz.moved"  # session_state: the teacher asked, closed, revealed or put away in the run before (quiz_views)
TALLY_SECONDS = 1.0  # the teacher's view reads the tally this often while the question is open
SPREAD_BINS = 12  # the spread's equal bins: at most this many, at least half as many (round widths 1, 2, 2.5, 5)
FLOAT_MAX = float(np.finfo(float).max)
SPREAD_FENCE = 3.0  # an answer past the quartiles by more than this many interquartile ranges is an outlier


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


class Bin(NamedTuple):
    """A bar of the spread: its interval as written ("[0.45, 0.5)", "< 0.2", a single answer "0.5", or the label
    given for answers that are not numbers), how many answers fell in it, whether the question's answer lies in it."""
    label: str
    count: int
    contains_answer: bool


def spread(answers: list[Answer], q: ex.Question, digits: int, not_a_number: str) -> list[Bin]:
    """The answers as a histogram: equal bins with round edges over the answers' range without their outliers (the
    quartiles ± SPREAD_FENCE interquartile ranges), widened to hold the answer ± its tolerance; an outlier's bin on
    each side if any fell there; one bin if every answer is the same number; a bin `not_a_number` for a text a
    store holds. Two answers of 10⁹ among 58 from 0.21 to 0.78 land in "> 0.8"; the bins stay 0.05 wide."""
    values = np.array([a.value for a in answers if _is_number(a.value)], dtype=float)  # (answers,)
    texts = len(answers) - values.size
    if values.size == 0:
        bins = []
    elif values.min() == values.max():
        one = float(values[0])
        bins = [Bin(fmt(one, digits), values.size, abs(one - q.answer) <= q.tolerance)]
    else:
        bins = _histogram(values, q, digits)
    return bins + ([Bin(not_a_number, texts, False)] if texts else [])


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _histogram(values: np.ndarray, q: ex.Question, digits: int) -> list[Bin]:
    q1, q3 = np.percentile(values, 25, method="lower"), np.percentile(values, 75, method="higher")  # answers given
    with np.errstate(over="ignore"):  # answers of ±10³⁰⁸: an infinite fence keeps them all
        fence = SPREAD_FENCE * (q3 - q1)
    inliers = values[(values >= q1 - fence) & (values <= q3 + fence)]  # (some answers,) q1 and q3 among them
    low, high = np.clip([min(inliers.min(), q.answer - q.tolerance), max(inliers.max(), q.answer + q.tolerance)],
                        -FLOAT_MAX, FLOAT_MAX)  # an answer of 10³⁰⁸ ± its tolerance is no wider than the doubles
    edges = _round_edges(low, high)  # (bins + 1,)
    labels = _distinct(edges, digits)
    counts, _ = np.histogram(values, edges)  # (bins,) each [a, b) but the last [a, b]; those outside left out
    home = min(int(np.searchsorted(edges, q.answer, side="right")) - 1, len(counts) - 1)
    bins = [Bin(f"[{labels[i]}, {labels[i + 1]}{']' if i == len(counts) - 1 else ')'}", int(n), i == home)
            for i, n in enumerate(counts)]
    below, above = int(np.sum(values < edges[0])), int(np.sum(values > edges[-1]))
    return [Bin(f"< {labels[0]}", below, False)] * (below > 0) + bins + [Bin(f"> {labels[-1]}", above, False)] * (
        above > 0)


def _round_edges(low: float, high: float) -> np.ndarray:
    """Edges k·w from below `low` to above `high`, w a round width (1, 2, 2.5 or 5 × 10ⁿ) giving at most
    SPREAD_BINS bins, each edge the double nearest its decimal (0.3, not 0.30000000000000004)."""
    step = high / SPREAD_BINS - low / SPREAD_BINS  # the narrowest width; as two quotients, ±10³⁰⁸ do not overflow
    step = step or max(abs(low), 1.0) / SPREAD_BINS  # a range of one number (a question of tolerance 0): one bin
    exponent = math.floor(math.log10(step)) - 1
    tenths = next(m for m in (10, 20, 25, 50, 100) if float(f"{m}e{exponent}") >= step)  # w = tenths × 10^exponent
    width = float(f"{tenths}e{exponent}")
    first, last = math.floor(low / width), math.ceil(high / width)
    return np.array([float(f"{k * tenths}e{exponent}") for k in range(first, max(last, first + 1) + 1)])


def _distinct(edges: np.ndarray, digits: int) -> list[str]:
    """The edges as fmt writes them with `digits` significant digits, or as many more as tell them apart."""
    for more in range(digits, 18):
        labels = [fmt(edge, more) for edge in edges]
        if len(set(labels)) == len(labels):
            return labels
    return labels


def current() -> tuple[Quiz, ex.Question] | None:
    """The room's question as the room holds it, and as a question; None outside a room or without one. Noted as
    the one this session shows (follow.catch_up_on_page compares)."""
    code = follow.room().code
    quiz = follow.from_store(lambda: follow.store().quiz(code), []) if code else None
    follow.show_quiz(None if quiz is None else (quiz.number, quiz.state))
    q = None if quiz is None else question_of(quiz.question)
    return None if q is None else (quiz, q)


def teaching() -> bool:
    """Whether this session is its room's teacher (who asks, closes and reveals)."""
    return bool(follow.room().key)


def tally(number: int) -> list[Answer]:
    """The answers to question `number`: the teacher's view, or everyone's once revealed ([] if refused)."""
    here = follow.room()
    return follow.from_store(lambda: follow.store().tally(here.code, number, here.key), []) or []


def ask(q: ex.Question) -> None:
    """A teacher's button: the question to the class."""
    here = follow.room()
    _teachers(lambda: follow.store().ask(here.code, here.key, stored(q)))
    session_store.put(MOVED, True)


def set_state(number: int, state: str) -> None:
    """A teacher's button: question `number` closed to answers, revealed or put away. The panel above the page grows
    or goes: a slide's heading is brought back into view (presenter mode)."""
    here = follow.room()
    _teachers(lambda: follow.store().set_quiz_state(here.code, here.key, number, state))
    session_store.put(MOVED, True)
    scroll.again()


def _teachers(call) -> None:
    notes = []
    follow.from_store(call, notes)
    follow.note(notes)
    follow.watcher().nudge()


def mine(number: int) -> Answer | None:
    """This student's answer to question `number` of its room, as the room holds it (sent from this session, or from
    the same link before a reload or on a process that has since died); None if it sent none."""
    here = follow.room()
    return follow.from_store(lambda: follow.store().answer_of(here.code, number, here.me), []) if here.code else None


def send(number: int, q: ex.Question, typed) -> None:
    """A student's answer: read as a number and checked; kept in the room if it is one (the student's first: a second
    is refused by the room, which keeps the first), else why not in REFUSED."""
    verdict = ex.check(q, typed)
    if not verdict.answered:
        session_store.put(REFUSED, (f"ex.refused.{verdict.code}", {"n": ex.MAX_ANSWER_CHARS}))
        return
    here, notes = follow.room(), []
    follow.from_store(lambda: follow.store().answer(here.code, number, here.me, verdict.value, verdict.right), notes)
    if notes:
        session_store.put(REFUSED, notes[0])


def answers_csv(answers: list[Answer], header: tuple[str, str, str]) -> str:
    """A question's answers as a spreadsheet reads them, in the order they came: the answer, 1 if right else 0 (a
    column's sum is how many were right), the time in UTC (ISO 8601, to the second)."""
    out = io.StringIO()
    rows = csv.writer(out, lineterminator="\n")
    rows.writerow(header)
    for answer in sorted(answers, key=lambda a: a.time):
        when = datetime.fromtimestamp(answer.time, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        rows.writerow([_as_cell(answer.value), int(answer.right), when])
    return out.getvalue()


def _as_cell(value):
    """A text a store holds that a spreadsheet would run as a formula (=, +, -, @) is kept as text."""
    return "'" + value if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r") else value
