"""The server's CPU for one idle poll of a student following a room (ui/classroom.py), against a rerun of the trivial
page (bench/trivial_app.py) on its own server, pair by pair as bench/pages_bench.py does.

    .venv/bin/python bench/follow_bench.py [--polls 60]

The room is made and filled in the store directly (a teacher on the attention page); the student opens its link,
is moved to that page, then its follow fragment is rerun as the browser's timer does: the version has not moved, so
each poll is one small read of the store. Prints the medians and their ratio.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from load import free_port, start_server  # noqa: E402
from pages_bench import process_cpu  # noqa: E402
from protocol import ForwardMsg, Session  # noqa: E402
from ui.rooms import SqliteRooms  # noqa: E402

SETTLE = 0.05  # seconds after a run for the server to finish its bookkeeping (as pages_bench's pairs)
TEACHER = {"preset": "hello-world", "src": "Hello World", "tgt": "Hola Mundo"}


async def cpu_ms(session: Session, pid: int, run) -> float:
    start = process_cpu(pid)
    result = await run()
    await asyncio.sleep(SETTLE)
    finished = (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)
    assert result.status in finished and not result.exceptions, (result.status, result.exceptions)
    return (process_cpu(pid) - start) * 1000


async def measure(app_url, app_pid, trivial_url, trivial_pid, code, polls: int) -> tuple[list, list]:
    student = await Session.open(app_url, "", f"room={code}")
    reference = await Session.open(trivial_url)
    try:
        (fragment,) = student.auto_reruns
        number = reference.last.widget("x")[1].id
        follow, trivial = [], []
        for i in range(polls + 5):  # the first 5 warm up
            poll = await cpu_ms(student, app_pid, lambda: student.auto_rerun(fragment))
            reference.set_widget(number, double_value=float(i % 7))
            rerun = await cpu_ms(reference, trivial_pid, reference.rerun)
            if i >= 5:
                follow.append(poll)
                trivial.append(rerun)
        return follow, trivial
    finally:
        await asyncio.gather(student.close(), reference.close())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--polls", type=int, default=60)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory, open(Path(directory) / "servers.log", "wb") as log:
        os.environ["TRANSFORMER_ROOMS_DB"] = database = str(Path(directory) / "rooms.sqlite3")
        store = SqliteRooms(database)
        code, key = store.create()
        store.put(code, key, "attention", TEACHER)
        app_port, trivial_port = free_port(), free_port()
        app = start_server("app.py", app_port, log)
        trivial = start_server("bench/trivial_app.py", trivial_port, log)
        try:
            follow, reference = asyncio.run(measure(f"http://localhost:{app_port}", app.pid,
                                                    f"http://localhost:{trivial_port}", trivial.pid, code, args.polls))
        finally:
            for server in (app, trivial):
                server.kill()
                server.wait()
    poll, rerun = statistics.median(follow), statistics.median(reference)
    print(f"idle follower poll: server CPU p50 {poll:.2f} ms (max {max(follow):.2f}); trivial page rerun p50 "
          f"{rerun:.2f} ms; ratio {poll / rerun:.2f} ({args.polls} pairs)")


if __name__ == "__main__":
    main()
