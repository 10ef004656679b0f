"""Follow the teacher (ui/classroom/follow.py) under load, and the server's CPU for one idle follower.

    .venv/bin/python bench/follow_bench.py class [--followers 60] [--duration 120] [--change 2-5] [--processes 1]
                                                 [--page attention] [--no-reference] [--json FILE]
                                                 [--against DIR [--rounds 1]]
    .venv/bin/python bench/follow_bench.py poll [--polls 60]

`class`: a teacher and N followers, each a Streamlit session speaking the browser's websocket protocol
(bench/protocol.py). The teacher opens a room from the sidebar of --page, then every --change seconds changes its
state through the page, as a person does: the source sentence in the sidebar and a cell of the page's weight editor
in turn. The followers open the students' link (room=CODE) and behave as the browser does: when the server asks
for a timed rerun of their follow fragment (st.fragment(run_every)) they send one at each tick, and a run the
server starts on its own they simply receive. A follower's page shows the change when a run of it ends
(script_finished) with the teacher's address (the link holds the whole state); the latency of a change is from the
teacher sending it to that moment, for every follower. With --processes N > 1 the server is deploy/classroom.py:
N processes behind nginx, every session first GETting the page for nginx's cookie, as a browser does. The
reference is the same teacher without followers. Server CPU and RSS come from /proc, over the time all followers
are on; "MB per follower" is (RSS with all - RSS with the teacher alone) / N. Errors: exceptions on a page, lost
connections, runs over --timeout, and changes a follower never showed (counted as missed).

--against DIR: the same class (same teacher's script) on the code in DIR too, e.g. a `git archive` of main, before
the code in --source, then (each further --rounds) in the other order, so that the machine's load weighs on both. It
prints each one's server CPU per follower's update, net of the teacher's own (the server's CPU with followers, less
what the teacher alone used over as long, over the updates), their ratio (--source / DIR) and each one's latency.

`poll`: the server's CPU for one timed poll of a student whose room has not moved, against a rerun of the trivial
page (bench/trivial_app.py) on its own server, pair by pair as bench/pages_bench.py does.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from websockets.exceptions import ConnectionClosed  # noqa: E402

from load import (Editor, Processes, Reading, Target, free_port, open_editor, page_cookies,  # noqa: E402
                  parse_interval, percentile, start_server, version)
from pages_bench import process_cpu  # noqa: E402
from protocol import ForwardMsg, RerunTimeout, Session  # noqa: E402
from ui.classroom.follow import POLL_SECONDS  # noqa: E402
from ui.stores.rooms import SqliteRooms  # noqa: E402

SETTLE = 0.05  # seconds after a run for the server to finish its bookkeeping (as pages_bench's pairs)
TEACHER = {"preset": "hello-world", "src": "Hello World", "tgt": "Hola Mundo"}
ROOM_KEYS = ("room", "key", "lang")  # the parts of a link that are a session's own, not the teacher's state
WORDS = "the class reads every word of a short sentence about attention and heads".split()
TARGET_BAR = {"p95_s": 2.0, "errors": 0}


# ---- class: a teacher and N followers ----------------------------------------------------------------------

def state_of(session: Session) -> str:
    """The state a session's address holds, without its room, key and language (what a follower takes)."""
    query = urllib.parse.parse_qsl(session.query_string or "")
    return json.dumps(sorted((k, v) for k, v in query if k not in ROOM_KEYS))


@dataclass
class Class:
    """What the teacher changed (send time, and the state each change leads to) and what the followers saw."""
    changes: list = field(default_factory=list)  # (monotonic time sent, state)
    index: dict = field(default_factory=dict)  # state -> the last change that leads to it
    latencies: list = field(default_factory=list)  # (change number, follower number, seconds)
    teacher_reruns: list = field(default_factory=list)  # seconds, the teacher's own change reruns
    errors: dict = field(default_factory=lambda: {"exception": 0, "disconnect": 0, "timeout": 0, "missed": 0})
    notes: list = field(default_factory=list)
    followers_on: int = 0
    stop_at: float = float("inf")
    window: tuple = (float("inf"), float("inf"))  # changes sent in it are counted: all followers on, before the end

    def error(self, kind: str, note: str) -> None:
        self.errors[kind] += 1
        if len(self.notes) < 10:
            self.notes.append(f"{kind}: {note}")


def sentence(rng: random.Random, number: int) -> str:
    return " ".join(rng.sample(WORDS, 4) + [str(number)])


async def open_session(url: str, page: str, query: str, args) -> Session:
    headers = await asyncio.to_thread(page_cookies, url, Target("", page, query, ""), args.timeout) \
        if args.processes > 1 else None
    return await Session.open(url, page, query, timeout=args.timeout, headers=headers)


async def open_room(url: str, args) -> tuple[Session, str]:
    """The teacher's session on --page, with a room opened from the sidebar as a teacher does; its code."""
    teacher = await open_session(url, args.page, "", args)
    assert await teacher.open_expander(r"room\.panel", args.timeout), "no room panel in the sidebar"
    teacher.set_widget(teacher.last.widget(r"room\.open")[1].id, trigger_value=True)
    await teacher.rerun(args.timeout)
    code = dict(urllib.parse.parse_qsl(teacher.query_string))["room"]
    return teacher, code


async def teach(teacher: Session, args, room: Class) -> None:
    """Every --change seconds, the sentence in the sidebar or a cell of the page's weight editor, in turn."""
    rng = random.Random(args.seed)
    target = Target.app(args.page, args.param, args.head)
    editor = Editor(teacher, target.editor_key, rng)
    number = 0
    while time.monotonic() < room.stop_at - args.change[1] - 5:  # the followers have 5 s after the last one
        await asyncio.sleep(rng.uniform(*args.change))
        number += 1
        if number % 2:
            teacher.set_widget(teacher.last.widget(r"ctl\.src")[1].id, string_value=sentence(rng, number))
        else:
            await open_editor(teacher, target, args.timeout)
            editor.change()
        sent = time.monotonic()
        run = await teacher.rerun(args.timeout)
        room.teacher_reruns.append(time.monotonic() - sent)
        if run.exceptions:
            room.error("exception", f"teacher: {run.exceptions[0].type}: {run.exceptions[0].message[:200]}")
        room.changes.append((sent, state_of(teacher)))
        room.index[state_of(teacher)] = len(room.changes) - 1


async def follow(number: int, url: str, code: str, args, room: Class, start_at: float) -> None:
    """One student's browser on the room's link until the end; reports each change it shows, once."""
    await asyncio.sleep(max(0.0, start_at - time.monotonic()))
    try:
        session = await open_session(url, "", f"room={code}", args)
    except (ConnectionClosed, OSError, RerunTimeout) as error:
        room.error("disconnect", f"follower {number} did not load: {error}")
        return
    room.followers_on += 1
    shown, tick = len(room.changes) - 1, time.monotonic()
    try:
        while time.monotonic() < room.stop_at:
            before = session.query_string
            fragment, seconds = min(session.auto_reruns.items(), key=lambda timer: timer[1], default=(None, None))
            if fragment is not None and tick + seconds < room.stop_at:  # the browser's timer: a rerun at each tick
                tick = max(tick + seconds, time.monotonic())  # (the poll; not the copy link's hourly timer)
                await asyncio.sleep(tick - time.monotonic())
                run = await session.auto_rerun(fragment, args.timeout)
            else:  # nothing to send before the end: the server starts a run when the room moves
                run = await asyncio.wait_for(session.server_run(), room.stop_at - time.monotonic())
            if session.query_string != before:  # a new page run: the browser's timers start again
                tick = time.monotonic()
            if run.exceptions:
                room.error("exception", f"follower {number}: {run.exceptions[0].type}: {run.exceptions[0].message}")
            change = room.index.get(state_of(session), -1)
            for earlier in range(shown + 1, change + 1):
                room.latencies.append((earlier, number, time.monotonic() - room.changes[earlier][0]))
            shown = max(shown, change)
    except TimeoutError:  # the end, waiting for the server
        pass
    except (ConnectionClosed, OSError) as error:
        room.error("disconnect", f"follower {number}: {error}")
    except RerunTimeout as error:
        room.error("timeout", f"follower {number}: {error}")
    finally:
        await session.close()


async def warm(pid) -> None:
    """Behind nginx: a page load on each process directly, so that "RSS with the teacher alone" holds the app's
    modules in every process, not only in the teacher's."""
    for port in pid.streamlit if isinstance(pid, Processes) else ():
        session = await Session.open(f"http://127.0.0.1:{port}")
        await session.close()


async def run_class(url: str, pid, args, followers: int) -> dict:
    room = Class()
    await warm(pid)
    teacher, code = await open_room(url, args)
    alone = Reading.of(pid)
    ramp = min(10.0, 0.2 * followers)
    room.stop_at = alone.at + ramp + args.duration
    tasks = [asyncio.create_task(follow(i, url, code, args, room, alone.at + i * ramp / max(1, followers)))
             for i in range(followers)]
    teaching = asyncio.create_task(teach(teacher, args, room))
    while room.followers_on + sum(room.errors.values()) < followers:
        await asyncio.sleep(0.2)
    start, loadavg_before = Reading.of(pid), os.getloadavg()
    await teaching
    room.window = (start.at, time.monotonic())
    await asyncio.sleep(max(0.0, room.stop_at - time.monotonic()))
    end = Reading.of(pid)
    await asyncio.gather(*tasks)
    await teacher.close()
    counted = [i for i, (sent, _) in enumerate(room.changes) if room.window[0] <= sent <= room.window[1]]
    seen = {(change, follower) for change, follower, _ in room.latencies}
    for change in counted:
        missed = followers - sum((change, f) in seen for f in range(followers))
        if missed:
            room.errors["missed"] += missed - 1
            room.error("missed", f"change {change}: shown by {followers - missed} of {followers}")
    latencies = [s for change, _, s in room.latencies if change in set(counted)]
    seconds = end.at - start.at
    return {
        "followers": followers, "processes": args.processes, "window_s": seconds, "changes": len(counted),
        "updates": len(latencies), "errors": sum(room.errors.values()), "errors_by_kind": room.errors,
        "error_notes": room.notes,
        "latency_s": {"p50": percentile(latencies, 50), "p95": percentile(latencies, 95),
                      "max": max(latencies, default=float("nan"))},
        "teacher_rerun_ms": {"p50": percentile(room.teacher_reruns, 50) * 1000,
                             "max": max(room.teacher_reruns, default=float("nan")) * 1000},
        "server_cores_busy": (end.cpu - start.cpu) / seconds, "server_cpu_s": end.cpu - start.cpu,
        "rss_mb": {"teacher_alone": alone.rss, "all": end.rss},
        "mb_per_follower": (end.rss - alone.rss) / followers if followers else None,
        "per_process": [{"port": port, "sessions": sessions, "rss_mb": rss} for port, _, sessions, rss in
                        end.per_process],
        "nginx_cores_busy": None if end.proxy_cpu is None else (end.proxy_cpu - start.proxy_cpu) / seconds,
        "loadavg_before": loadavg_before, "loadavg_after": os.getloadavg(), "latencies_s": latencies,
    }


def serve(args, log, directory: Path, source: Path):
    """The server(s) for one run of the code in source: (url, pid or Processes, the process to stop)."""
    port = free_port(*args.ports)
    if args.processes == 1:
        server = start_server("app.py", port, log, source)
        return f"http://localhost:{port}", server.pid, server
    run_dir = Path(tempfile.mkdtemp(dir=directory))
    launcher = subprocess.Popen([sys.executable, "deploy/classroom.py", "--processes", str(args.processes), "--port",
                                 str(port), "--address", "127.0.0.1", "--run-dir", str(run_dir)],
                                cwd=source, stdout=log, stderr=subprocess.STDOUT)
    for _ in range(600):
        if (run_dir / "pids.json").exists():
            return f"http://127.0.0.1:{port}", Processes.read(run_dir / "pids.json"), launcher
        if launcher.poll() is not None:
            break
        time.sleep(0.25)
    launcher.kill()
    raise RuntimeError(f"deploy/classroom.py did not start; see {log.name}")


def class_phase(args, followers: int, log, directory: Path, source: Path) -> dict:
    os.environ["TRANSFORMER_ROOMS_DB"] = str(Path(tempfile.mkdtemp(dir=directory)) / "rooms.sqlite3")
    url, pid, server = serve(args, log, directory, source)
    try:
        return asyncio.run(run_class(url, pid, args, followers))
    finally:
        server.terminate()
        server.wait()


def describe(result: dict) -> list[str]:
    lat, rss = result["latency_s"], result["rss_mb"]
    errors = ", ".join(f"{n} {kind}" for kind, n in result["errors_by_kind"].items() if n) or "none"
    where = "1 process" if result["processes"] == 1 else f"{result['processes']} processes behind nginx"
    lines = [f"{result['followers']} followers, {where}, {result['window_s']:.0f} s: {result['changes']} changes, "
             f"errors {result['errors']} ({errors})"]
    if result["followers"]:
        lines.append(f"  change -> follower's page: p50 {lat['p50']:.2f} s, p95 {lat['p95']:.2f} s, max "
                     f"{lat['max']:.2f} s over {result['updates']} updates")
    lines.append(f"  teacher's rerun p50 {result['teacher_rerun_ms']['p50']:.0f} ms, max "
                 f"{result['teacher_rerun_ms']['max']:.0f} ms; server {result['server_cores_busy']:.2f} cores busy"
                 + ("" if result["nginx_cores_busy"] is None else f", nginx {result['nginx_cores_busy']:.3f}")
                 + (f"; {result['server_cpu_s'] / result['updates'] * 1000:.0f} ms of server CPU per follower's "
                    f"update" if result["updates"] else ""))
    lines.append(f"  RSS {rss['teacher_alone']:.0f} MB with the teacher alone, {rss['all']:.0f} MB with all"
                 + ("" if result["mb_per_follower"] is None else f": {result['mb_per_follower']:.2f} MB per follower")
                 + "".join(f"; port {p['port']}: {p['sessions']} sessions, {p['rss_mb']:.0f} MB"
                           for p in result["per_process"]))
    lines.append(f"  load average before {' '.join(f'{x:.2f}' for x in result['loadavg_before'])}, after "
                 f"{' '.join(f'{x:.2f}' for x in result['loadavg_after'])}")
    return lines + [f"  ! {note}" for note in result["error_notes"]]


def class_main(args) -> None:
    copies = {"before": args.against, "after": args.source} if args.against else {"": args.source}
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()}; serving "
          + ", ".join(f"{label} {source} ({version(source)})".lstrip() for label, source in copies.items()))
    results = {"command": " ".join(sys.argv), "version": version(args.source), "runs": []}
    if args.against:
        results["version_before"] = version(args.against)
    phases = [("class", args.followers)] + ([] if args.no_reference else [("alone", 0)])
    with tempfile.TemporaryDirectory() as directory, open(Path(directory) / "servers.log", "w+b") as log:
        for round_number in range(args.rounds):
            for label in list(copies)[::-1 if round_number % 2 else 1]:
                for name, followers in phases:
                    result = class_phase(args, followers, log, Path(directory), copies[label])
                    results["runs"].append({"code": label, "phase": name, **result})
                    results.setdefault(name, result)  # the first of each phase (of the code before, with --against)
                    print(f"[{label}] " * bool(label) + "\n".join(describe(result)))
        log.seek(0)
        text = log.read().decode(errors="replace")
        tracebacks = text.count("Traceback")
        if tracebacks:
            start = text.index("Traceback")
            print(text[max(0, start - 300):start + 3000])
    summary = {label: follower_cost(results["runs"], label) for label in copies}
    results["summary"] = summary
    if args.against:
        print("\n".join(compare(summary)))
    last = summary[list(copies)[-1]]
    print(f"server log: {tracebacks} tracebacks; bar: p95 {last['p95_s']:.2f} s < {TARGET_BAR['p95_s']} s: "
          f"{'yes' if last['p95_s'] < TARGET_BAR['p95_s'] else 'NO'}, errors {last['errors']} == 0: "
          f"{'yes' if last['errors'] == 0 else 'NO'}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, default=str) + "\n")


def follower_cost(runs: list, label: str) -> dict:
    """One code's classes pooled: server CPU per follower's update, net of the teacher's own where a run of the
    teacher alone says what that costs (its cores busy, over as long), and the latency's p50 and p95."""
    classes = [run for run in runs if run["code"] == label and run["phase"] == "class"]
    alone = [run["server_cores_busy"] for run in runs if run["code"] == label and run["phase"] == "alone"]
    updates = sum(run["updates"] for run in classes)
    teacher = statistics.mean(alone) if alone else 0.0
    cpu = sum(run["server_cpu_s"] - teacher * run["window_s"] for run in classes)
    latencies = [s for run in classes for s in run["latencies_s"]]
    return {"cpu_ms_per_update": cpu / updates * 1000 if updates else float("nan"), "net": bool(alone),
            "updates": updates, "p50_s": percentile(latencies, 50), "p95_s": percentile(latencies, 95),
            "errors": sum(run["errors"] for run in classes)}


def compare(summary: dict) -> list[str]:
    before, after = summary["before"], summary["after"]
    net = "net of the teacher's own" if before["net"] and after["net"] else "with the teacher's (--no-reference)"
    ratio = after["cpu_ms_per_update"] / before["cpu_ms_per_update"]
    return [f"server CPU per follower's update ({net}): before {before['cpu_ms_per_update']:.1f} ms, after "
            f"{after['cpu_ms_per_update']:.1f} ms: ratio {ratio:.2f}",
            *(f"  {label}: change -> follower's page p50 {cost['p50_s']:.2f} s, p95 {cost['p95_s']:.2f} s over "
              f"{cost['updates']} updates, errors {cost['errors']}" for label, cost in summary.items())]


# ---- poll: one idle poll's CPU -----------------------------------------------------------------------------

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
        polls_of = [fragment for fragment, seconds in student.auto_reruns.items() if seconds == POLL_SECONDS]
        if not polls_of:
            raise SystemExit("no poll to measure: the watcher (ui/classroom/room_watch.py) wakes the students' pages; "
                             "a page polls only where ui/core/streamlit_internals.py is off")
        fragment = polls_of[0]
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


def poll_main(args) -> None:
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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    modes = parser.add_subparsers(dest="mode", required=True)
    lesson = modes.add_parser("class", help="a teacher and N followers")
    lesson.add_argument("--followers", type=int, default=60)
    lesson.add_argument("--duration", type=float, default=120, help="seconds with all followers on")
    lesson.add_argument("--change", type=parse_interval, default=(2.0, 5.0), help="LO-HI seconds between changes")
    lesson.add_argument("--processes", type=int, default=1, help="1: one process, direct; N > 1: N behind nginx")
    lesson.add_argument("--page", default="attention", help="the teacher's page (url path)")
    lesson.add_argument("--param", default="enc.0.attn.W_Q", help="the weight whose editor the teacher changes")
    lesson.add_argument("--head", default="0")
    lesson.add_argument("--timeout", type=float, default=30, help="seconds a run may take before it is an error")
    lesson.add_argument("--source", type=Path, default=ROOT, help="serve this copy (e.g. a `git archive` of HEAD)")
    lesson.add_argument("--against", type=Path, help="also serve this copy (the code before), for a ratio")
    lesson.add_argument("--rounds", type=int, default=1, help="with --against: each copy this many times, in turn")
    lesson.add_argument("--ports", type=lambda text: tuple(map(int, text.split("-"))), default=(8600, 8699))
    lesson.add_argument("--no-reference", action="store_true", help="skip the run without followers")
    lesson.add_argument("--seed", type=int, default=0)
    lesson.add_argument("--json", help="also write the results to this file")
    poll = modes.add_parser("poll", help="one idle poll's server CPU against the trivial page's rerun")
    poll.add_argument("--polls", type=int, default=60)
    args = parser.parse_args(argv)
    class_main(args) if args.mode == "class" else poll_main(args)


if __name__ == "__main__":
    main()
