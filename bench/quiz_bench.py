"""The class quiz under a burst of answers (ui/classroom/quiz.py): does a class of N answering at once slow the class?

    .venv/bin/python bench/quiz_bench.py [--students 60] [--questions 3] [--burst 3] [--processes 1] [--json FILE]

A teacher (a Streamlit session speaking the browser's protocol, bench/protocol.py) opens a room on the exercises
page's by-hand questions; N students open the room's link and follow. For each of --questions questions: the
teacher's count of answers (the panel's timed fragment, rerun every second as the browser's timer does) is first
timed with no answer coming (quiet); the teacher asks; each student, woken by the server, answers within --burst
seconds of seeing the question (uniformly at random), as a person types; the teacher's count is rerun every second
until it reads N, then timed a few more times with every answer in and nothing else on the server (quiet); then
the teacher reveals and every student's page shows the answer. It prints, over all questions:
the question's delay to the students, the students' answer round trip (send to the run's end), the time until the
teacher's count reads N, the teacher's count rerun during the burst against quiet (the ratio: "does not slow the
class"), the reveal's delay, the server's busy cores during the bursts, and errors (exceptions, timeouts, an answer
not shown as sent)."""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from follow_bench import open_session, serve  # noqa: E402
from load import Reading, percentile, version  # noqa: E402
from protocol import RerunTimeout, Session  # noqa: E402
from ui.classroom.quiz import TALLY_SECONDS  # noqa: E402
from ui.core.i18n import translator  # noqa: E402

T = translator("en")
KINDS = ("score", "scaled", "weight", "layer_norm", "prob")  # the hello-world pass's by-hand questions
COUNT = re.compile(r"^(\d+) answered")
QUIET_RERUNS = 5


def count(session: Session) -> int:
    return max((int(m[1]) for m in map(COUNT.match, session.last.texts()) if m), default=-1)


async def teacher_room(url: str, args) -> tuple[Session, str]:
    teacher = await open_session(url, "exercises", "", args)
    assert await teacher.open_expander(r"room\.panel", args.timeout), "no room panel in the sidebar"
    await teacher.click(r"room\.open", args.timeout)
    assert await teacher.open_tab(r"ex\.tab", T("ex.tab.hand"), args.timeout)
    return teacher, dict(kv.split("=", 1) for kv in teacher.query_string.split("&"))["room"]


async def tally_rerun(teacher: Session, args) -> float:
    fragment = next(f for f, seconds in teacher.auto_reruns.items() if seconds == TALLY_SECONDS)
    sent = time.monotonic()
    await teacher.auto_rerun(fragment, args.timeout)
    return time.monotonic() - sent


async def student_answers(student: Session, number: int, asked: dict, args, rng: random.Random, result: dict):
    """One student's question `number`: seen, answered within the burst, then the answer revealed."""
    try:
        while student.last.widget(rf"quiz\.typed\.{number}") is None:
            await asyncio.wait_for(student.server_run(), args.timeout)
        result["shown"].append(time.monotonic() - asked["at"])
        await asyncio.sleep(rng.uniform(0, args.burst))
        typed = student.last.widget(rf"quiz\.typed\.{number}")[1].id
        student.set_widget(typed, string_value=f"{rng.uniform(0, 2):.3f}")
        sent = time.monotonic()
        run = await student.click(r"quiz\.send", args.timeout)
        result["answer"].append(time.monotonic() - sent)
        if run.exceptions or student.last.widget(rf"quiz\.typed\.{number}") is not None:
            result["errors"].append(f"answer not taken: {run.exceptions[:1]}")
        while not any(text.startswith(T("quiz.answer", answer="", tolerance="")[:11]) for text in student.last.texts()):
            await asyncio.wait_for(student.server_run(), args.timeout)
        result["revealed"].append(time.monotonic() - asked["revealed_at"])
    except (TimeoutError, RerunTimeout) as error:
        result["errors"].append(f"timeout: {error!r}")


async def question(teacher: Session, students: list, number: int, args, rng, pid, result: dict) -> None:
    asked = {"at": time.monotonic(), "revealed_at": float("inf")}
    start = Reading.of(pid)
    await teacher.click(rf"quiz\.ask\.{KINDS[(number - 1) % len(KINDS)]}-1", args.timeout)
    answering = [asyncio.create_task(student_answers(s, number, asked, args, rng, result)) for s in students]
    while count(teacher) < len(students) and time.monotonic() - asked["at"] < args.timeout:
        await asyncio.sleep(TALLY_SECONDS)
        result["burst"].append(await tally_rerun(teacher, args))
    result["all_counted"].append(time.monotonic() - asked["at"])
    end = Reading.of(pid)
    result["cores"].append((end.cpu - start.cpu) / (end.at - start.at))
    for _ in range(QUIET_RERUNS):  # the same count, every answer in: nothing else on the server
        await asyncio.sleep(TALLY_SECONDS)
        result["quiet"].append(await tally_rerun(teacher, args))
    asked["revealed_at"] = time.monotonic()
    await teacher.click(r"quiz\.reveal", args.timeout)
    await asyncio.gather(*answering)


async def run_quiz(url: str, pid, args) -> dict:
    rng = random.Random(args.seed)
    teacher, code = await teacher_room(url, args)
    students = []
    for _ in range(args.students):
        students.append(await open_session(url, "", f"room={code}", args))
    result = {key: [] for key in ("quiet", "burst", "shown", "answer", "all_counted", "revealed", "cores", "errors")}
    try:
        for number in range(1, args.questions + 1):
            await question(teacher, students, number, args, rng, pid, result)
    finally:
        await asyncio.gather(teacher.close(), *(s.close() for s in students))
    return result


def spread(values) -> str:
    largest = max(values, default=float("nan"))
    return f"p50 {percentile(values, 50):.2f}, p95 {percentile(values, 95):.2f}, max {largest:.2f} s"


def describe(result: dict, args) -> list[str]:
    quiet, burst = percentile(result["quiet"], 50), percentile(result["burst"], 50)
    return [f"{args.students} students, {args.questions} questions, answers within {args.burst:g} s of the question:",
            f"  question shown to a student after: {spread(result['shown'])}",
            f"  a student's answer round trip: {spread(result['answer'])}",
            f"  teacher's count reads {args.students} after: {spread(result['all_counted'])}",
            f"  teacher's count rerun: quiet p50 {quiet * 1000:.0f} ms, during the burst p50 {burst * 1000:.0f} ms "
            f"(max {max(result['burst'], default=float('nan')) * 1000:.0f} ms): {burst / quiet:.2f}x",
            f"  reveal shown to a student after: {spread(result['revealed'])}",
            f"  server busy cores during the bursts: {', '.join(f'{c:.2f}' for c in result['cores'])}",
            f"  errors: {len(result['errors'])}" + (f" ({result['errors'][0]})" if result["errors"] else "")]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--students", type=int, default=60)
    parser.add_argument("--questions", type=int, default=3)
    parser.add_argument("--burst", type=float, default=3.0, help="seconds within which every student answers")
    parser.add_argument("--processes", type=int, default=1, help="1: one process, direct; N > 1: N behind nginx")
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--ports", type=lambda text: tuple(map(int, text.split("-"))), default=(8600, 8699))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()}; code {version(ROOT)}")
    with tempfile.TemporaryDirectory() as directory, open(Path(directory) / "servers.log", "w+b") as log:
        os.environ["TRANSFORMER_ROOMS_DB"] = str(Path(directory) / "rooms.sqlite3")
        url, pid, server = serve(args, log, Path(directory), ROOT)
        try:
            result = asyncio.run(run_quiz(url, pid, args))
        finally:
            server.terminate()
            server.wait()
    print("\n".join(describe(result, args)))
    if args.json:
        Path(args.json).write_text(json.dumps({"command": " ".join(sys.argv), "version": version(ROOT), **result},
                                              indent=2) + "\n")


if __name__ == "__main__":
    main()
