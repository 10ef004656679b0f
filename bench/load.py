"""Classroom load: N simulated students, each in its own Streamlit session, editing a weight every few seconds.

    .venv/bin/python bench/load.py [--sessions 60] [--duration 120] [--interval 1-3] [--page attention]
                                   [--param enc.0.attn.W_Q --head 0] [--no-reference] [--source DIR] [--json FILE]
                                   [--sample-every 30] [--settle 120]

No browser: each session speaks Streamlit's own websocket protocol (bench/protocol.py) on loopback, so 60 of
them fit on 2 cores. A session loads the page, then, until the time is up, waits a random interval and
changes one of the page's weight editors the way the browser reports a typed cell: the editor's widget
state (a data editor's JSON `edited_rows`, or a number input's value) in a `rerun_script` BackMsg.
Latency is from sending that BackMsg to the run's `script_finished`.

The script starts its own server (`streamlit run app.py` in --source, the repository by default) or drives
--url. The reference is the trivial page (bench/trivial_app.py: one input, one formula, one chart) under
the same load right after the app, with the same kind of input as the app's editor; the ratios against it
are what compares across machines. Server CPU and RSS are read from /proc. docs/PERFORMANCE.md has figures.

For a soak (--duration 600), --sample-every records the server's RSS over the run, and the report gives the
growth and the least-squares slope (MB/min) from --settle seconds to the end. RSS is the only figure seen
from outside: it includes the Python heap, but cannot tell it from NumPy's buffers or allocator slack.
"""
from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
from websockets.exceptions import ConnectionClosed

from protocol import RerunTimeout, Session, timed_rerun

ROOT = Path(__file__).resolve().parent.parent
TICKS = os.sysconf("SC_CLK_TCK")
TARGETS = {"p95_ms": 500, "errors": 0, "mb_per_session": 2, "mb_per_min": 0.5}


# ---- the server and its process ----------------------------------------------------------------------------

def free_port(low=8600, high=8699) -> int:
    for port in random.sample(range(low, high + 1), high - low + 1):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    raise RuntimeError(f"no free port in {low}-{high}")


def start_server(script: str, port: int, log, source: Path = ROOT, extra: tuple = ()) -> subprocess.Popen:
    """`streamlit run script` in source as `make app` runs it (its .streamlit/config.toml applies)."""
    server = subprocess.Popen([sys.executable, "-m", "streamlit", "run", script, "--server.port", str(port),
                               "--server.headless", "true", *extra], cwd=source, stdout=log,
                              stderr=subprocess.STDOUT)
    wait_until_up(server, port)
    return server


def wait_until_up(server: subprocess.Popen, port: int) -> None:
    """Wait for a starting server to answer its health check (up to a minute); kill it if it does not."""
    for _ in range(240):
        try:
            urllib.request.urlopen(f"http://localhost:{port}/_stcore/health", timeout=1)
            return
        except OSError:
            if server.poll() is not None:
                break
            time.sleep(0.25)
    server.kill()
    raise RuntimeError(f"the server did not start on port {port}")


def cpu_seconds(pid: int, thread: int | None = None) -> float:
    """User + system CPU time of the process (all its threads), or of one of its threads."""
    stat = f"/proc/{pid}/task/{thread}/stat" if thread else f"/proc/{pid}/stat"
    fields = Path(stat).read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime (fields 14 and 15 of stat)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def server_pid(port: int) -> int | None:
    """The pid listening on a local port (for --url), from /proc/net/tcp{,6} and the fds of our processes."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            parts = line.split()
            if parts[3] == "0A" and int(parts[1].rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
                inodes.add(parts[9])
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:[") and target[8:-1] in inodes:
                    return int(pid)
        except OSError:
            continue
    return None


# ---- several processes behind nginx (deploy/classroom.py, with --pids) --------------------------------------

@dataclass(frozen=True)
class Processes:
    """The Streamlit processes ({port: pid}) and nginx's master pid, from the pids.json deploy/classroom.py
    writes."""
    streamlit: dict
    nginx: int | None

    @classmethod
    def read(cls, path) -> "Processes":
        listed = json.loads(Path(path).read_text())
        return cls({int(port): pid for port, pid in listed["streamlit"].items()}, listed.get("nginx"))


def connections(port: int) -> int:
    """Established TCP connections into a local port: one per session on that process (its websocket, or
    nginx's connection that carries it)."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            parts = line.split()
            if parts[3] == "01" and int(parts[1].rsplit(":", 1)[1], 16) == port:  # 01: ESTABLISHED
                count += 1
    return count


def family_cpu_seconds(pid: int) -> float:
    """CPU time of a process and its children (nginx's master and its worker)."""
    children = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            if int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:  # ppid
                children.append(int(entry))
        except OSError:
            continue
    return sum(cpu_seconds(p) for p in [pid, *children] if Path(f"/proc/{p}").exists())


# ---- what a student does -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Target:
    """Where the load goes: a page, its query string, and the user key (regex) of the editor to change."""
    name: str
    page: str  # url path; "" for a single-page app
    query_string: str
    editor_key: str
    expander_key: str = ""  # the expander the editor is drawn in while it is open, if any

    @classmethod
    def app(cls, page, param, head, query_string=""):
        # ui/views/editors.edit_param keys an editor f"edit.{name}.{head}.{version}"; its single-cell form adds
        # f".v.{index}" to the number input. The editor's expander is f"open.{name}.{head}".
        name = rf"{re.escape(param)}\.{re.escape(head)}"
        label = f"{page} page" + (f" ({query_string})" if query_string else "")
        return cls(label, page, query_string, rf"edit\.{name}\.\d+(?:\.v\.\(.*\))?", rf"open\.{name}")

    @classmethod
    def trivial(cls, kind):
        return cls(f"trivial page ({'data editor' if kind == 'grid' else 'number input'})", "",
                   "input=grid" if kind == "grid" else "", "grid" if kind == "grid" else "x")


async def open_editor(session: Session, target: Target, timeout: float = 60.0) -> None:
    """Open the expander of the target's editor, as a student clicks it, if the editor is not shown."""
    if target.expander_key and session.last.widget(target.editor_key) is None:
        await session.open_expander(target.expander_key, timeout)


class Editor:
    """A session's view of the weight editor: finds it in the last run and changes one of its cells."""

    def __init__(self, session: Session, key: str, rng: random.Random):
        self.session, self.key, self.rng = session, key, rng
        self.grid_id, self.grid_shape, self.edited_rows = None, None, {}

    def kind(self) -> str | None:
        found = self.session.last.widget(self.key)
        return None if found is None else ("grid" if found[0] == "dataframe" else "number")

    def change(self, row: int | None = None, column: int | None = None, value: float | None = None) -> str:
        """Set a cell (random unless given; a number input has one) to a value (random unless given) in the
        editor's widget state, which the next rerun sends; returns what was typed."""
        found = self.session.last.widget(self.key)
        if found is None:
            raise LookupError(f"no widget whose key matches {self.key!r} on the page")
        kind, proto = found
        value = round(self.rng.uniform(-2, 2), 3) if value is None else value
        if kind == "dataframe":
            if proto.id != self.grid_id:  # a new editor (first time, or redrawn after a reset)
                frame = pa.ipc.open_stream(proto.arrow_data.data).read_all().to_pandas()
                self.grid_id, self.grid_shape, self.edited_rows = proto.id, (len(frame), list(frame.columns)), {}
            rows, columns = self.grid_shape
            row = self.rng.randrange(rows) if row is None else row
            name = str(columns[self.rng.randrange(len(columns)) if column is None else column])
            self.edited_rows.setdefault(str(row), {})[name] = value  # the grid's state accumulates
            state = {"edited_rows": self.edited_rows, "added_rows": [], "deleted_rows": []}
            self.session.set_widget(proto.id, string_value=json.dumps(state))
            return f"row {row}, column {name}: {value}"
        if kind == "number_input":
            self.session.set_widget(proto.id, double_value=value)
            return f"{proto.id.rsplit('-', 1)[-1]}: {value}"
        raise LookupError(f"{proto.id} is a {kind}, not an editor")


@dataclass
class Tally:
    loads: list = field(default_factory=list)  # seconds per initial page load
    edits: list = field(default_factory=list)  # (finish time, seconds) per edit rerun
    errors: dict = field(default_factory=lambda: {"exception": 0, "disconnect": 0, "timeout": 0, "other": 0})
    error_notes: list = field(default_factory=list)
    loaded_at: list = field(default_factory=list)
    editor_kind: str | None = None
    compression: str | None = None
    bytes_per_edit: list = field(default_factory=list)
    sessions: list = field(default_factory=list)

    def error(self, kind, note):
        self.errors[kind] += 1
        if len(self.error_notes) < 10:
            self.error_notes.append(f"{kind}: {note}")


@dataclass
class Clock:
    stop_at: float = float("inf")  # monotonic time after which sessions make no new edit


async def student(number: int, url: str, target: Target, args, tally: Tally, start_at: float, clock: Clock,
                  first: asyncio.Event | None = None):
    """One session: load the page, then wait, edit, wait, edit... until clock.stop_at. After an error (an
    exception on the page, a lost connection, a timeout) the student reloads the page, as people do."""
    rng = random.Random(args.seed * 1000 + number)
    await asyncio.sleep(max(0.0, start_at - time.monotonic()))
    session = editor = None
    while time.monotonic() < clock.stop_at:
        try:
            if session is None:
                session, editor = await _load(url, target, args, tally, rng)
                if session is None:
                    await asyncio.sleep(rng.uniform(*args.interval))
                    continue
                if first is not None and not first.is_set():  # the first session edits once before the others
                    await _edit(session, editor, args, tally)
                    first.set()
            await asyncio.sleep(rng.uniform(*args.interval))
            if time.monotonic() >= clock.stop_at:
                break
            if not await _edit(session, editor, args, tally):
                session, editor = await _discard(session, tally), None
        except (ConnectionClosed, OSError, RerunTimeout, LookupError) as error:
            kind = "timeout" if isinstance(error, RerunTimeout) else "other" if isinstance(
                error, LookupError) else "disconnect"  # a closed or failed connection
            tally.error(kind, f"session {number}: {type(error).__name__}: {error}")
            if isinstance(error, LookupError) and editor is None:  # the page has no such editor at all
                break
            session, editor = await _discard(session, tally), None
        finally:
            if first is not None and session is None:
                first.set()
    if first is not None:
        first.set()


async def _load(url, target, args, tally, rng):
    begin = time.perf_counter()
    headers = await asyncio.to_thread(page_cookies, url, target, args.timeout) if args.cookies else None
    session = await Session.open(url, target.page, target.query_string, timeout=args.timeout, headers=headers)
    tally.sessions.append(session)
    tally.loads.append(time.perf_counter() - begin)
    tally.loaded_at.append(time.monotonic())
    tally.compression = session.compression
    if not _check(session.last, tally, "load"):  # counted; the student tries again
        return await _discard(session, tally), None
    await open_editor(session, target, args.timeout)
    editor = Editor(session, target.editor_key, rng)
    tally.editor_kind = tally.editor_kind or editor.kind()
    if editor.kind() is None:
        await _discard(session, tally)
        raise LookupError(f"no editor whose key matches {target.editor_key!r} on the page")
    return session, editor


def page_cookies(url, target, timeout) -> dict:
    """What a browser sends with its websocket after loading the page: the cookies the page's response set
    (behind deploy/'s nginx, the one that keeps the session on one process) and its Origin."""
    address = f"{url.rstrip('/')}/{target.page}" + (f"?{target.query_string}" if target.query_string else "")
    with urllib.request.urlopen(address, timeout=timeout) as response:
        cookies = [header.split(";", 1)[0] for header in response.headers.get_all("Set-Cookie") or []]
    headers = {"Origin": url.rstrip("/")}
    if cookies:
        headers["Cookie"] = "; ".join(cookies)
    return headers


async def _discard(session, tally):
    if session is not None:
        tally.sessions.remove(session)
        try:
            await session.close()
        except Exception:  # closing a broken connection: already counted
            pass


async def _edit(session: Session, editor: Editor, args, tally: Tally) -> bool:
    """One edit and its rerun; False when the page raised."""
    editor.change()
    seconds, run = await timed_rerun(session, args.timeout)
    tally.edits.append((time.monotonic(), seconds))
    tally.bytes_per_edit.append(run.bytes)
    return _check(run, tally, "edit")


def _check(run, tally, when) -> bool:
    for exception in run.exceptions:
        tally.error("exception", f"{when}: {exception.type}: {exception.message[:200]}")
    if run.page_not_found:
        tally.error("other", f"{when}: page not found")
    return not run.exceptions and not run.page_not_found


# ---- one measured phase ------------------------------------------------------------------------------------

def percentile(values, q):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


@dataclass(frozen=True)
class Reading:
    at: float  # monotonic seconds
    cpu: float = 0.0  # the server's CPU seconds, all threads
    loop_cpu: float = 0.0  # of its main thread, which runs the event loop (websockets, sending ForwardMsgs)
    rss: float = float("nan")  # MB
    per_process: tuple = ()  # with --pids: (port, CPU seconds, sessions, RSS) of each Streamlit process
    proxy_cpu: float | None = None  # with --pids: nginx's CPU seconds

    @classmethod
    def of(cls, pid: int | Processes | None) -> "Reading":
        if pid is None:
            return cls(time.monotonic())
        if isinstance(pid, Processes):  # the sums over the processes, and each one's share
            pids = pid.streamlit.values()
            per_process = tuple((port, cpu_seconds(p), connections(port), rss_mb(p))
                                for port, p in pid.streamlit.items())
            return cls(time.monotonic(), sum(p[1] for p in per_process), sum(cpu_seconds(p, p) for p in pids),
                       sum(p[3] for p in per_process), per_process, pid.nginx and family_cpu_seconds(pid.nginx))
        return cls(time.monotonic(), cpu_seconds(pid), cpu_seconds(pid, pid), rss_mb(pid))


def flatness(timeline: list, settle: float) -> dict | None:
    """RSS from the first sample at or after `settle` seconds to the last one, and the least-squares slope over
    those samples (MB per minute); None with fewer than 3 such samples."""
    after = [(sample["t_s"], sample["rss_mb"]) for sample in timeline if sample["t_s"] >= settle]
    if len(after) < 3:
        return None
    slope = statistics.linear_regression([t for t, _ in after], [mb for _, mb in after]).slope
    return {"settle_s": settle, "from": after[0], "to": after[-1], "growth_mb": after[-1][1] - after[0][1],
            "slope_mb_per_min": slope * 60, "samples": len(after)}


def spread(window: Reading, end: Reading) -> dict | None:
    """How the sessions and RSS (at the end) and the CPU (over the window) went over the processes, with --pids."""
    if not end.per_process:
        return None
    before = {port: cpu for port, cpu, _, _ in window.per_process}
    return {"per_process": [{"port": port, "sessions": sessions, "cpu_s": cpu - before[port], "rss_mb": rss}
                            for port, cpu, sessions, rss in end.per_process],
            "proxy_cpu_s": None if end.proxy_cpu is None else end.proxy_cpu - window.proxy_cpu}


async def phase(url: str, pid: int | None, target: Target, args) -> dict:
    """N sessions on one server: the first loads and edits once (RSS with one session), the others join over
    the ramp, then all edit until the time is up. Latency, reruns/s and CPU are counted over the window
    where all N sessions are on; errors over the whole run."""
    tally, loadavg_before, client_cpu = Tally(), os.getloadavg(), time.process_time()
    clock, first = Clock(), asyncio.Event()
    tasks = [asyncio.create_task(student(0, url, target, args, tally, time.monotonic(), clock, first))]
    try:
        await asyncio.wait_for(first.wait(), max(1.0, min(args.timeout * 2, args.deadline - time.monotonic())))
    except TimeoutError:
        tasks[0].cancel()
        raise RuntimeError(f"the first session did not load {url} in time") from None
    one = Reading.of(pid)
    clock.stop_at = one.at + args.ramp + args.duration
    step = args.ramp / max(1, args.sessions - 1)
    tasks += [asyncio.create_task(student(i, url, target, args, tally, one.at + i * step, clock))
              for i in range(1, args.sessions)]
    rss_peak, window, cut = one.rss, None, False
    timeline = [{"t_s": 0.0, "rss_mb": one.rss, "sessions": len(tally.sessions)}]  # RSS every --sample-every s

    def sample(reading):
        timeline.append({"t_s": reading.at - one.at, "rss_mb": reading.rss, "sessions": len(tally.sessions)})
    try:
        async with asyncio.timeout_at(args.deadline):
            while time.monotonic() < clock.stop_at:
                await asyncio.sleep(0.5)
                now = Reading.of(pid)
                if window is None and len(tally.loaded_at) + sum(tally.errors.values()) >= args.sessions:
                    window = now
                rss_peak = max(rss_peak, now.rss)
                if args.sample_every and now.at - one.at >= len(timeline) * args.sample_every:
                    sample(now)
            end = Reading.of(pid)
            sample(end)
            await asyncio.gather(*tasks)  # the edits in flight finish
    except TimeoutError:
        cut, end = True, Reading.of(pid)
        sample(end)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    for session in list(tally.sessions):
        await _discard(session, tally)
    window = window or end
    seconds = max(1e-9, end.at - window.at)
    latencies = [s * 1000 for t, s in tally.edits if window.at <= t <= end.at]
    per_rerun = (lambda cpu: cpu / len(latencies)) if pid and latencies else (lambda cpu: None)
    return {
        "target": target.name, "page": target.page, "query_string": target.query_string,
        "editor": tally.editor_kind, "compression": tally.compression, "sessions": args.sessions,
        "duration_s": args.duration, "interval_s": list(args.interval), "cut_by_hard_cap": cut,
        "edits": len(tally.edits), "loads": len(tally.loads),
        "errors": sum(tally.errors.values()), "errors_by_kind": tally.errors, "error_notes": tally.error_notes,
        "window_s": seconds, "window_edits": len(latencies), "reruns_per_s": len(latencies) / seconds,
        "latency_ms": {"p50": percentile(latencies, 50), "p95": percentile(latencies, 95),
                       "max": max(latencies, default=float("nan")),
                       "mean": statistics.fmean(latencies) if latencies else float("nan")},
        "load_ms": {"p50": percentile([s * 1000 for s in tally.loads], 50),
                    "max": max((s * 1000 for s in tally.loads), default=float("nan"))},
        "server_cpu_s": end.cpu - window.cpu if pid else None,
        "server_cores_busy": (end.cpu - window.cpu) / seconds if pid else None,
        "server_cpu_per_rerun_s": per_rerun(end.cpu - window.cpu),
        "event_loop_cpu_per_rerun_s": per_rerun(end.loop_cpu - window.loop_cpu),
        "rss_mb": {"one_session": one.rss, "all_sessions": end.rss, "peak": rss_peak},
        "rss_timeline": timeline if pid else None,
        "rss_flatness": flatness(timeline, args.settle) if pid else None,
        "processes": spread(window, end),
        "mb_per_extra_session": (end.rss - one.rss) / (args.sessions - 1) if pid and args.sessions > 1 else None,
        "kb_sent_per_edit": statistics.fmean(tally.bytes_per_edit) / 1024 if tally.bytes_per_edit else None,
        "client_cpu_s": time.process_time() - client_cpu,
        "loadavg_before": loadavg_before, "loadavg_after": os.getloadavg(),
    }


def run_phase(script: str | None, url: str | None, target: Target, args, log) -> dict:
    server = None
    if url is None:
        port = free_port(*args.ports)
        server = start_server(script, port, log, args.source, tuple(args.server_arg))
        url, pid = f"http://localhost:{port}", server.pid
    elif args.pids:
        pid = Processes.read(args.pids)
    else:
        pid = server_pid(int(url.rsplit(":", 1)[1].split("/")[0])) if re.search(r":\d+", url) else None
    try:
        return asyncio.run(phase(url, pid, target, args))
    finally:
        if server is not None:
            server.kill()
            server.wait()


# ---- report ------------------------------------------------------------------------------------------------

def describe(result: dict) -> list[str]:
    lat, rss = result["latency_ms"], result["rss_mb"]
    errors = ", ".join(f"{n} {kind}" for kind, n in result["errors_by_kind"].items() if n) or "none"
    lines = [
        f"{result['target']}: {result['sessions']} sessions, {result['duration_s']:g} s, an edit every "
        f"{result['interval_s'][0]:g}-{result['interval_s'][1]:g} s per session, editor: {result['editor']}"
        + (" (cut by the hard cap)" if result["cut_by_hard_cap"] else ""),
        f"  errors {result['errors']} ({errors}) in {result['edits']} edits and {result['loads']} page loads",
        f"  with all sessions on ({result['window_s']:.0f} s): {result['window_edits']} edits, "
        f"{result['reruns_per_s']:.1f} reruns/s; edit -> script_finished p50 {lat['p50']:.0f} ms, "
        f"p95 {lat['p95']:.0f} ms, max {lat['max']:.0f} ms",
        f"  page load p50 {result['load_ms']['p50']:.0f} ms, max {result['load_ms']['max']:.0f} ms",
    ]
    if result["server_cpu_s"] is not None:
        per = result["server_cpu_per_rerun_s"]
        lines += [
            f"  server CPU {result['server_cpu_s']:.1f} s over {result['window_s']:.0f} s "
            f"({result['server_cores_busy']:.2f} cores busy), "
            + (f"{per * 1000:.0f} ms per rerun, of which {result['event_loop_cpu_per_rerun_s'] * 1000:.0f} ms "
               f"in the event loop (main thread)" if per else "no reruns"),
            f"  server RSS {rss['one_session']:.0f} MB with one session, {rss['all_sessions']:.0f} MB with all "
            f"(peak {rss['peak']:.0f}): {result['mb_per_extra_session']:.2f} MB per extra session"
            if result["mb_per_extra_session"] is not None else f"  server RSS {rss['all_sessions']:.0f} MB",
        ]
    if result.get("rss_flatness"):
        flat = result["rss_flatness"]
        lines += [
            "  server RSS over the run (s: MB): " + ", ".join(
                f"{sample['t_s']:.0f}: {sample['rss_mb']:.1f}" for sample in result["rss_timeline"]),
            f"  from {flat['from'][0]:.0f} s to the end ({flat['to'][0]:.0f} s): {flat['growth_mb']:+.1f} MB, "
            f"slope {flat['slope_mb_per_min']:+.2f} MB/min (least squares over {flat['samples']} samples)",
        ]
    if result["processes"]:
        nginx = result["processes"]["proxy_cpu_s"]
        lines.append("  over the processes: " + "; ".join(
            f"port {p['port']}: {p['sessions']} sessions, {p['cpu_s']:.1f} s CPU, {p['rss_mb']:.0f} MB"
            for p in result["processes"]["per_process"]) + ("" if nginx is None else f"; nginx {nginx:.1f} s CPU"))
    lines.append(f"  {result['kb_sent_per_edit'] or 0:.1f} kB from the server per edit; load generator CPU "
                 f"{result['client_cpu_s']:.1f} s; load average before {_avg(result['loadavg_before'])}, "
                 f"after {_avg(result['loadavg_after'])}")
    lines += [f"  ! {note}" for note in result["error_notes"]]
    return lines


def _avg(triple):
    return " ".join(f"{x:.2f}" for x in triple)


def ratios(app: dict, reference: dict) -> dict:
    def ratio(a, b):
        return a / b if a is not None and b else None
    return {
        "p50": ratio(app["latency_ms"]["p50"], reference["latency_ms"]["p50"]),
        "p95": ratio(app["latency_ms"]["p95"], reference["latency_ms"]["p95"]),
        "cpu_per_rerun": ratio(app["server_cpu_per_rerun_s"], reference["server_cpu_per_rerun_s"]),
        "reruns_per_s": ratio(app["reruns_per_s"], reference["reruns_per_s"]),
        "mb_per_extra_session": ratio(app["mb_per_extra_session"], reference["mb_per_extra_session"]),
    }


def verdict(result: dict) -> str:
    mb = result["mb_per_extra_session"]
    checks = [f"p95 {result['latency_ms']['p95']:.0f} ms < {TARGETS['p95_ms']} ms: "
              f"{'yes' if result['latency_ms']['p95'] < TARGETS['p95_ms'] else 'NO'}",
              f"errors {result['errors']} == 0: {'yes' if result['errors'] == 0 else 'NO'}"]
    if mb is not None:
        checks.append(f"{mb:.2f} MB per extra session < {TARGETS['mb_per_session']} MB: "
                      f"{'yes' if mb < TARGETS['mb_per_session'] else 'NO'}")
    if result.get("rss_flatness"):
        slope = result["rss_flatness"]["slope_mb_per_min"]
        checks.append(f"RSS slope {slope:+.2f} MB/min < {TARGETS['mb_per_min']} MB/min: "
                      f"{'yes' if slope < TARGETS['mb_per_min'] else 'NO'}")
    return "targets: " + "; ".join(checks)


def version(source: Path) -> str:
    """The commit of a checkout, with -dirty for uncommitted changes."""
    described = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=source, capture_output=True,
                               text=True)
    if described.returncode == 0:
        return described.stdout.strip()
    return "not a git checkout"


def parse_interval(text: str) -> tuple[float, float]:
    low, _, high = text.partition("-")
    low, high = float(low), float(high or low)
    if not 0 <= low <= high:
        raise argparse.ArgumentTypeError("LO-HI seconds, 0 <= LO <= HI")
    return low, high


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--page", default="attention", help="the app page's url path, or 'trivial'")
    parser.add_argument("--param", default="enc.0.attn.W_Q", help="the weight whose editor the students change")
    parser.add_argument("--head", default="0", help="the editor's head (0-based), or None for unsplit weights")
    parser.add_argument("--query", default="", help="the app page's query string, e.g. preset=paper")
    parser.add_argument("--sessions", type=int, default=60)
    parser.add_argument("--duration", type=float, default=120, help="seconds all sessions edit together")
    parser.add_argument("--interval", type=parse_interval, default=(1.0, 3.0), help="LO-HI seconds between edits")
    parser.add_argument("--ramp", type=float, help="seconds over which sessions join (default 0.2 s each, <= 10)")
    parser.add_argument("--timeout", type=float, default=30, help="seconds a rerun may take before it is an error")
    parser.add_argument("--max-time", type=float,
                        help="hard cap on the whole run in seconds (default: (ramp + duration + 90) per phase)")
    parser.add_argument("--trivial-input", choices=["auto", "grid", "number"], default="auto",
                        help="the reference's input; auto: the same kind as the app's editor")
    parser.add_argument("--no-reference", action="store_true", help="measure the app page only")
    parser.add_argument("--url", help="drive this running app server instead of starting one")
    parser.add_argument("--source", type=Path, default=ROOT,
                        help="serve the app from this copy, e.g. `git archive HEAD | tar -x -C DIR`: the server "
                             "reloads modules that change under it, so others' edits would disturb a long run")
    parser.add_argument("--server-arg", action="append", default=[],
                        help="an extra `streamlit run` flag, e.g. --server-arg=--server.fileWatcherType=none")
    parser.add_argument("--cookies", action="store_true",
                        help="each session GETs the page first and sends the cookies it set with its websocket, as "
                             "a browser does: deploy/'s nginx keeps a session on one process by such a cookie")
    parser.add_argument("--pids", help="with --url: the pids.json of deploy/classroom.py; server CPU and RSS are "
                                       "summed over its Streamlit processes, and each one's share is shown")
    parser.add_argument("--ports", type=lambda text: tuple(map(int, text.split("-"))), default=(8600, 8699),
                        help="LO-HI: the range the servers it starts listen in")
    parser.add_argument("--sample-every", type=float, default=30,
                        help="seconds between readings of the server's RSS over the run (0: none)")
    parser.add_argument("--settle", type=float, default=120,
                        help="seconds after the first session's load from which RSS growth and slope are taken")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)
    args.ramp = min(10.0, 0.2 * args.sessions) if args.ramp is None else args.ramp
    phases = 1 if args.page == "trivial" or args.no_reference else 2
    args.max_time = args.max_time or phases * (args.ramp + args.duration + 90)
    args.deadline = time.monotonic() + args.max_time

    print(f"{datetime.datetime.now().isoformat(timespec='seconds')}, {os.cpu_count()} CPUs, "
          f"load average {_avg(os.getloadavg())}; python {sys.version.split()[0]}")
    results = {"command": " ".join(["bench/load.py"] + (argv or sys.argv[1:])),
               "date": datetime.datetime.now().isoformat(timespec="seconds"), "cpus": os.cpu_count(),
               "source": str(args.source), "version": version(args.source)}
    print(f"serving {args.source} ({results['version']})")
    with tempfile.NamedTemporaryFile(prefix="load-server-", suffix=".log", delete=False) as log:
        if args.page != "trivial":
            app = run_phase("app.py", args.url, Target.app(args.page, args.param, args.head, args.query), args, log)
            results["app"] = app
            print("\n".join(describe(app)))
            print(verdict(app))
        if (args.page == "trivial" or not args.no_reference) and time.monotonic() < args.deadline:
            kind = args.trivial_input
            if kind == "auto":
                kind = "number" if results.get("app", {}).get("editor") == "number" else "grid"
            reference = run_phase("bench/trivial_app.py", None, Target.trivial(kind), args, log)
            results["reference"] = reference
            print("\n".join(describe(reference)))
        elif not args.no_reference:
            print("no reference: the hard cap (--max-time) was reached")
        if "app" in results and "reference" in results:
            results["ratios"] = ratios(results["app"], results["reference"])
            print("ratio app / trivial page: " + ", ".join(
                f"{name} {value:.2f}x" for name, value in results["ratios"].items() if value is not None))
    tracebacks = Path(log.name).read_text(errors="replace").count("Traceback")
    results["server_log"] = {"path": log.name, "tracebacks": tracebacks}
    if args.url is None or "reference" in results:
        print(f"server log {log.name}: {tracebacks} tracebacks")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, default=str) + "\n")
    return results


if __name__ == "__main__":
    main()
