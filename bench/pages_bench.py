"""Per page: what one rerun of each page costs the server, and how long an edit takes to show in the browser,
each as a ratio to the trivial page (bench/trivial_app.py) measured in the same run.

    .venv/bin/python bench/pages_bench.py [--pages attention,ffn] [--reruns 30] [--edits 7] [--no-browser]
                                          [--engine] [--paper] [--load] [--write docs/PERFORMANCE.md] [--json FILE]

`make perf` runs it with --engine (bench/engine_bench.py: the engine against PyTorch), --paper (each page's
server CPU per rerun with the paper preset too) and --write, which replaces the "Per page" section of
docs/PERFORMANCE.md; `make perf LOAD=1` adds --load (bench/load.py: a
classroom of 60 sessions for 2 minutes on each of the app and the trivial page).

The regression guard (bench/perf_guard.py): before the section is replaced, the ratios it records (each case's
server CPU per rerun and browser edit-to-update, × the trivial page) are read from the --write file (else from
docs/PERFORMANCE.md), and the new run's are compared with them: a table of old → new, and every case more than
20 % worse. The figures are written all the same; then the exit status is 1 if a case was more than 20 % worse.

A rerun is the one a user causes on the page: a weight edit where the page has a weight editor (its first
one, the way bench/load.py changes it), otherwise a change of the source sentence in the sidebar (between two
sentences of the same length). The attention page is measured both ways, and also with the paper preset. The
reference for an edit in a grid is the trivial page's one-cell grid (?input=grid); for a number input or the
sidebar, its number input.

Server: one session per page speaks Streamlit's websocket protocol (bench/protocol.py) and sends its reruns
one at a time, after warm-up ones. A rerun's cost is the server process's CPU time, all threads, from sending
it until SETTLE seconds after its script_finished, read from the process's CPU-time clock (nanoseconds, and
counting the script threads that have ended; /proc's stat counts 10 ms ticks). Browser: headless Chromium
types into the page (bench/app_bench.py's helpers: the last cell of row 0 of the first weight editor, its
number input, or the sidebar's source sentence) and times from Enter until a run has started, the page's text
has changed (where the change shows in text) and the script state is notRunning again.

Both servers serve a copy of the working tree taken at the start (the app's own .streamlit/config.toml
applies), so edits made while it runs do not reach them.
"""
from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import streamlit
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import sync_playwright

import perf_guard
from app_bench import CELL_EDITOR, READY, launch, timed_change, type_in_cell
from load import ROOT, Editor, free_port, percentile, start_server, version
from protocol import Session, timed_rerun

sys.path.insert(0, str(ROOT))
from ui.core.navigation import PAGES  # noqa: E402
from ui.core.runs import RUNS_KEPT  # noqa: E402

DEFAULT_PAGE = next(iter(PAGES.values()))[0]  # app.py's default page, served at "/" (its own path is not found)
SETTLE = 0.05  # seconds after script_finished that still count towards a rerun (the server finishing up)
TIMEOUT = 60.0
SOURCES = ("Hello World", "World Hello")  # the sidebar change alternates between these; known to both presets
EDITOR_KEY = r"edit\..+\.\d+(?:\.v\.\(.*\))?"  # ui/views/editors.edit_param's keys: a grid, or a one-cell number input
EXPANDER_KEY = r"open\..+"  # ... and the expander that holds each one
SIDEBAR_KEY = r"ctl\.src"
TRIVIAL_KEYS = {"grid": "grid", "number": "x"}
CONTENT = """() => [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stElementContainer"]')]
    .filter(e => !e.querySelector('[data-testid="stDataFrame"]')).map(e => e.textContent).join('\\n')"""
CHANGED = f"(before) => ({CONTENT})() !== before"  # the page's text, without the grids (a grid shows what was typed)
NEVER = "() => false"  # for a page whose text does not show the change: until a run is seen to start and end
EDIT_LABEL = re.compile(r"Edit ")  # ui/core/i18n's "view.edit" in English, the browser's language here
DEFAULT_DOC = ROOT / "docs" / "PERFORMANCE.md"
FAILURES = ROOT / "build" / "perf-failures"  # a screenshot of each page the browser could not measure


@dataclass(frozen=True)
class Case:
    """What is measured: a page (or "trivial"), its preset, and the input changed: "auto" (the first weight
    editor, else the sidebar), "sidebar", or for the trivial page "grid" or "number"; measured, it is resolved
    to "grid", "number" or "sidebar"."""
    page: str
    input: str = "auto"
    preset: str = "hello-world"

    @property
    def trivial(self) -> bool:
        return self.page == "trivial"

    @property
    def path(self) -> str:
        return "" if self.trivial or self.page == DEFAULT_PAGE else self.page

    @property
    def query_string(self) -> str:
        if self.trivial:
            return "input=grid" if self.input == "grid" else ""
        return "" if self.preset == "hello-world" else f"preset={self.preset}"

    @property
    def reference(self) -> "Case":
        return Case("trivial", "grid" if self.input == "grid" else "number")

    @property
    def label(self) -> str:
        if self.trivial:
            return f"trivial page ({'one-cell grid' if self.input == 'grid' else 'number input'})"
        return self.page + ("" if self.preset == "hello-world" else f" ({self.preset} preset)")

    @property
    def change(self) -> str:
        if self.trivial:
            return f"its {'grid' if self.input == 'grid' else 'number input'}"
        return {"grid": "weight edit (grid)", "number": "weight edit (number input)",
                "sidebar": "source sentence (sidebar)"}.get(self.input, self.input)


def cases(pages: list[str]) -> list[Case]:
    chosen = [Case(page) for page in pages]
    if "attention" in pages:
        chosen += [Case("attention", "sidebar"), Case("attention", preset="paper"),
                   Case("attention", "sidebar", "paper")]
    return chosen


def paper_cases(pages: list[str], chosen: list[Case]) -> list[Case]:
    """Each page's first input (a weight editor, else the sidebar) with the paper's sizes, where not chosen yet."""
    return [case for case in (Case(page, preset="paper") for page in pages) if case not in chosen]


# ---- the server: CPU per rerun -----------------------------------------------------------------------------

def process_cpu(pid: int) -> float:
    """CPU seconds of a process, all threads including those that have ended: Linux's CPU-time clock of
    another process (clock_getcpuclockid(pid) is MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED))."""
    return time.clock_gettime(((~pid) << 3) | 2)


def _changer(session: Session, case: Case):
    """A function that sets the i-th change of the case's input in the session, and the resolved input."""
    if case.input != "sidebar":
        key = TRIVIAL_KEYS[case.input] if case.trivial else EDITOR_KEY
        editor = Editor(session, key, random.Random(0))
        if editor.kind() is not None:
            return (lambda i: editor.change()), editor.kind()
    if session.last.widget(SIDEBAR_KEY) is None:
        raise LookupError(f"{case.label}: neither a weight editor nor the sidebar's source sentence")

    def change(i):
        session.set_widget(session.last.widget(SIDEBAR_KEY)[1].id, string_value=SOURCES[(i + 1) % 2])
    return change, "sidebar"


def _check(run, case):
    if run.exceptions or run.page_not_found:
        problem = run.exceptions[0].message[:300] if run.exceptions else "page not found"
        raise RuntimeError(f"{case.label}: {problem}")


async def _prepared(url: str, case: Case) -> tuple[Session, object, str]:
    """A session on the case's page with its input found (and its editor's expander open): the session, the
    function that makes the i-th change, and the resolved input."""
    session = await Session.open(url, case.path, case.query_string, timeout=TIMEOUT)
    try:
        _check(session.last, case)
        if not case.trivial and case.input != "sidebar":  # the weight editors are drawn while open
            await session.open_expander(EXPANDER_KEY, TIMEOUT)
        change, resolved = _changer(session, case)
    except BaseException:
        await session.close()
        raise
    return session, change, resolved


async def _measured(session: Session, pid: int, change, i: int, case: Case) -> tuple[float, float, float]:
    """The i-th change and its rerun: server CPU (ms), latency (ms) and kB sent."""
    change(i)
    start = process_cpu(pid)
    seconds, run = await timed_rerun(session, TIMEOUT)
    await asyncio.sleep(SETTLE)
    used = process_cpu(pid) - start
    _check(run, case)
    return used * 1000, seconds * 1000, run.bytes / 1024


async def server_case(app, trivial, case: Case, reruns: int, warmup: int) -> dict:
    """The case's reruns, each followed by one of its reference (the trivial page, same kind of input, on its own
    server): a change in the machine's load shows in both, and the ratio is taken pair by pair's medians."""
    page_session, page_change, resolved = await _prepared(app.url, case)
    reference = replace(case, input=resolved).reference
    try:
        ref_session, ref_change, _ = await _prepared(trivial.url, reference)
        try:
            samples = {"page": [], "reference": []}
            for i in range(warmup + reruns):
                pair = (await _measured(page_session, app.pid, page_change, i, case),
                        await _measured(ref_session, trivial.pid, ref_change, i, reference))
                if i >= warmup:
                    samples["page"].append(pair[0])
                    samples["reference"].append(pair[1])
        finally:
            await ref_session.close()
    finally:
        await page_session.close()
    cpu, latency, sent = zip(*samples["page"])
    return {"case": asdict(replace(case, input=resolved)), "cpu_ms": list(cpu), "latency_ms": list(latency),
            "kb_sent": statistics.fmean(sent), "reference_cpu_ms": [sample[0] for sample in samples["reference"]]}


def warmup(case: Case, reruns: int) -> int:
    """Warm-up reruns: with the paper preset, enough to fill the shared cache of engine runs with the case's own
    edits. Until then each edit's model (the edited weight's copy: 8 MB for W_1) lands in memory the process has
    not used yet, which on this VM costs about 20 ms per 8 MB against 1 ms once the cache recycles its memory;
    a class passes that point after its first RUNS_KEPT edits, so the steady state is what it sees."""
    return max(reruns, RUNS_KEPT) if case.preset == "paper" else reruns


async def idle_cpu_ms_per_s(pid: int, seconds: float = 2.0) -> float:
    start = process_cpu(pid)
    await asyncio.sleep(seconds)
    return (process_cpu(pid) - start) * 1000 / seconds


async def server_phase(app, trivial, chosen: list[Case], args) -> dict:
    """Each case, its reruns interleaved with its reference's."""
    results = {"idle_ms_per_s": {"app": await idle_cpu_ms_per_s(app.pid),
                                 "trivial": await idle_cpu_ms_per_s(trivial.pid)}, "pages": []}
    for case in chosen:
        try:
            result = await server_case(app, trivial, case, args.reruns, warmup(case, args.warmup))
        except Exception as error:  # reported with the others, which are still measured
            result = _failed(case, error)
        results["pages"].append(result)
        _print_server(result)
    return results


def _failed(case: Case, error: Exception) -> dict:
    return {"case": asdict(case), "error": f"{type(error).__name__}: {(str(error).splitlines() or [''])[0]}"}


def _print_server(result):
    case = Case(**result["case"])
    if "error" in result:
        print(f"  server {case.label}, {case.change}: FAILED {result['error']}", flush=True)
        return
    print(f"  server {case.label:34s} {case.change:27s} CPU p50 {statistics.median(result['cpu_ms']):6.1f} ms, "
          f"p90 {percentile(result['cpu_ms'], 90):6.1f} ms; latency p50 {statistics.median(result['latency_ms']):6.1f} "
          f"ms; {result['kb_sent']:.0f} kB; its reference p50 {statistics.median(result['reference_cpu_ms']):6.1f} ms",
          flush=True)


# ---- the browser: edit-to-update ---------------------------------------------------------------------------

def _typist(page, case: Case):
    """A function that types the i-th value into the case's input (Enter, pressed by the timer, commits it),
    and the input: "auto" finds the first weight editor (opening its expander), else the sidebar."""
    kind, scope = case.input, page.locator('[data-testid="stMain"]')
    if not case.trivial and kind != "sidebar":
        scope = page.locator('[data-testid="stExpander"]').filter(
            has=page.locator("summary", has_text=EDIT_LABEL)).first
        if scope.count() == 0:
            kind = "sidebar"
        else:
            scope.locator("summary").click()  # a rerun draws the editor into it
            scope.locator('[data-testid="stDataFrame"], [data-testid="stNumberInputField"]').first.wait_for()
            time.sleep(1)  # the expander opens with an animation, which moves what it holds
            kind = "grid" if scope.locator('[data-testid="stDataFrame"]').count() else "number"
    if kind in ("sidebar", "number"):
        box = page.locator('[data-testid="stSidebar"] [data-testid="stTextInputField"]').first if kind == "sidebar" \
            else scope.locator('[data-testid="stNumberInputField"]').last  # after a big weight's row and column
        texts = SOURCES[1:] + SOURCES[:1] if kind == "sidebar" else None

        def type_text(i):
            box.scroll_into_view_if_needed()  # the source sentence sits below the sidebar's list of pages
            box.fill(texts[i % 2] if texts else str(i + 2))
        return type_text, kind
    grid = scope.locator('[data-testid="stDataFrame"]').first
    x_offset = last_cell_offset(page, grid)
    return (lambda i: type_in_cell(page, grid, str(i + 2), x_offset)), kind


def last_cell_offset(page, grid) -> float:
    """How far from a data editor's left edge the last cell of its row 0 is. Row labels can be wide, and
    typing into one would rename the row, so this double-clicks from the right edge leftwards until a cell's
    editor opens, and closes it."""
    grid.scroll_into_view_if_needed()
    for x_offset in range(int(grid.bounding_box()["width"]) - 30, 0, -40):
        box = grid.bounding_box()
        page.mouse.dblclick(box["x"] + x_offset, box["y"] + 35 + 17)
        try:
            page.locator(CELL_EDITOR).first.wait_for(timeout=1000)
        except PlaywrightTimeout:  # no column here
            continue
        page.keyboard.press("Escape")
        return x_offset
    raise LookupError("no editable cell in row 0 of the data editor")


def browser_case(page, url: str, case: Case, edits: int) -> dict:
    """One warm-up edit, which also finds out whether the change shows in the page's text, then timed ones."""
    page.goto(f"{url}/{case.path}" + (f"?{case.query_string}" if case.query_string else ""))
    page.wait_for_selector(READY)
    time.sleep(1)
    type_value, kind = _typist(page, case)
    before = page.evaluate(CONTENT)
    timed_change(page, lambda: type_value(0), CHANGED, before)
    shows = page.evaluate(CONTENT) != before
    times = []
    for i in range(1, edits + 1):
        time.sleep(0.5)
        changed, arg = (CHANGED, page.evaluate(CONTENT)) if shows else (NEVER, None)
        times.append(timed_change(page, lambda: type_value(i), changed, arg))
    return {"case": asdict(replace(case, input=kind)), "ms": times, "text_changes": shows}


def browser_phase(app, trivial, chosen: list[Case], edits: int) -> dict:
    references = [Case("trivial", "grid"), Case("trivial", "number")]
    results = {"references": [], "pages": []}
    with sync_playwright() as playwright:
        browser, page = launch(playwright)
        results["chromium"] = browser.version
        browser_case(page, trivial.url, references[1], 2)  # the browser's own warm-up
        for when in ("before", "after"):
            for case in references:
                result = browser_case(page, trivial.url, case, edits)
                results["references"].append({**result, "when": when})
                _print_browser(result)
            if when == "before":
                for case in chosen:
                    try:
                        result = browser_case(page, app.url, case, edits)
                    except Exception as error:  # reported with the others, which are still measured
                        result = _failed(case, error)
                        FAILURES.mkdir(parents=True, exist_ok=True)
                        page.screenshot(path=FAILURES / f"{case.page}-{case.input}-{case.preset}.png")
                    results["pages"].append(result)
                    _print_browser(result)
        browser.close()
    return results


def _print_browser(result):
    case = Case(**result["case"])
    if "error" in result:
        print(f"  browser {case.label}, {case.change}: FAILED {result['error']} (screenshot in {FAILURES})",
              flush=True)
        return
    print(f"  browser {case.label:33s} {case.change:27s} median {statistics.median(result['ms']):6.0f} ms, "
          f"max {max(result['ms']):6.0f} ms" + ("" if result["text_changes"] else " (no text change)"), flush=True)


# ---- the engine and the classroom load (other scripts) -----------------------------------------------------

def engine_phase() -> dict:
    """bench/engine_bench.py, its output as it prints it and parsed: per environment, engine and torch ms."""
    command = [sys.executable, "bench/engine_bench.py"]
    output = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    print(output, end="")
    blocks = []
    for block in re.split(r"^== ", output, flags=re.M)[1:]:
        def number(label):
            return float(re.search(rf"^  {label}.*?([\d.]+) (?:ms|x)$", block, re.M).group(1))
        blocks.append({"title": block.splitlines()[0], "kernel": re.search(r"BLAS kernel: (.*)", block).group(1),
                       "engine_ms": number("engine model.run"), "torch_ms": number("torch "),
                       "ratio": number("ratio engine / torch")})
    return {"command": "bench/engine_bench.py", "blocks": blocks}


def load_phase(source: Path, sessions: int, duration: float, json_path: Path) -> dict:
    command = ["bench/load.py", "--sessions", str(sessions), "--duration", f"{duration:g}", "--source", str(source),
               "--ports", "8900-8999", "--json", str(json_path)]
    subprocess.run([sys.executable, *command], cwd=ROOT, check=True)
    results = json.loads(json_path.read_text())
    results["command"] = " ".join(command[:5])  # the source copy and the JSON path are this run's own
    return results


# ---- the servers -------------------------------------------------------------------------------------------

@dataclass
class Server:
    process: subprocess.Popen
    url: str

    @property
    def pid(self) -> int:
        return self.process.pid


def snapshot(into: Path) -> Path:
    """A copy of the working tree (tracked files and new ones, as they are now)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.split("\0")
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, into / name)
    return into


def serve(script: str, port: int, source: Path, log) -> Server:
    return Server(start_server(script, port, log, source), f"http://localhost:{port}")


# ---- the report --------------------------------------------------------------------------------------------

def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    memory = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
                  if line.startswith("MemTotal"))
    return (f"{os.cpu_count()} vCPUs ({cpu}), {memory / 2**20:.0f} GB RAM, Python {platform.python_version()}, "
            f"Streamlit {streamlit.__version__}")


def summarize(results: dict) -> dict:
    """Medians, p90s and ratios of the server and browser phases: {"server": [...], "browser": [...]}."""
    summary = {}
    if "server" in results:
        rows = []
        for result in results["server"]["pages"]:
            case = Case(**result["case"])
            if "error" in result:
                rows.append({"case": case, "error": result["error"]})
                continue
            p50, p90 = statistics.median(result["cpu_ms"]), percentile(result["cpu_ms"], 90)
            ref_p50, ref_p90 = statistics.median(result["reference_cpu_ms"]), percentile(result["reference_cpu_ms"], 90)
            rows.append({"case": case, "p50": p50, "p90": p90, "ref_p50": ref_p50, "x_p50": p50 / ref_p50,
                         "x_p90": p90 / ref_p90, "latency_p50": statistics.median(result["latency_ms"]),
                         "kb_sent": result["kb_sent"]})
        summary["server"], summary["server_reference"] = rows, _paired_references(results["server"]["pages"])
    if "browser" in results:
        reference = _pooled(results["browser"]["references"], "ms")
        rows = []
        for result in results["browser"]["pages"]:
            case = Case(**result["case"])
            if "error" in result:
                rows.append({"case": case, "error": result["error"]})
                continue
            median = statistics.median(result["ms"])
            rows.append({"case": case, "median": median, "max": max(result["ms"]),
                         "x": median / reference[case.reference.input]["p50"], "text_changes": result["text_changes"]})
        summary["browser"], summary["browser_reference"] = rows, reference
    return summary


def _paired_references(pages: list[dict]) -> dict:
    """Per trivial input: the median, p90 and range of the references' medians, over the cases paired with it."""
    pooled = {}
    for kind in ("grid", "number"):
        runs = [r["reference_cpu_ms"] for r in pages if "error" not in r and Case(**r["case"]).reference.input == kind]
        if runs:
            medians = [statistics.median(run) for run in runs]
            pooled[kind] = {"p50": statistics.median([x for run in runs for x in run]),
                            "p90": percentile([x for run in runs for x in run], 90),
                            "low": min(medians), "high": max(medians)}
    return pooled


def _pooled(references: list[dict], field: str) -> dict:
    """Per trivial input: the median and p90 of before's and after's samples together, and each one's median."""
    pooled = {}
    for kind in ("grid", "number"):
        runs = [r for r in references if r["case"]["input"] == kind]
        samples = [x for r in runs for x in r[field]]
        pooled[kind] = {"p50": statistics.median(samples), "p90": percentile(samples, 90),
                        **{r["when"]: statistics.median(r[field]) for r in runs}}
    return pooled


def _failure_line(row) -> str:
    return f"| {row['case'].label} | {row['case'].change} | failed: {row['error']} |"


def new_ratios(summary: dict) -> dict[tuple[str, str, str], float]:
    """This run's ratios per case, as the section writes them (one decimal), for perf_guard.compare."""
    ratios = {}
    for measure, field in (("server", "x_p50"), ("browser", "x")):
        for row in summary.get(measure, []):
            if "error" not in row:
                ratios[(measure, row["case"].label, row["case"].change)] = float(f"{row[field]:.1f}")
    return ratios


def markdown(results: dict, summary: dict, changes: list, record_version: str | None) -> str:
    run = results["run"]
    lines = ["## Per page", "",
             f"Measured {run['date']} on {run['machine']}; Chromium {results.get('browser', {}).get('chromium', '-')}. "
             f"The app was `{run['version']}`, served from a copy of the working tree taken at the start. "
             f"Load average (1, 5, 15 min) {_avg(run['loadavg_before'])} before, {_avg(run['loadavg_after'])} after. "
             "Every figure is read as a ratio to a reference measured in the same run; the milliseconds are there "
             "to read the ratios by, and do not compare across machines.", "",
             "**Regression guard** (`bench/perf_guard.py`). Before it replaces this section, `make perf` reads the "
             "ratios recorded here, each case's server CPU per rerun (× trivial, p50) and browser edit-to-update "
             "(× trivial), and compares this run's, to one decimal as written: it prints old → new for every case "
             f"and lists those more than {perf_guard.LIMIT * 100:.0f} % worse, then writes the new figures and "
             "exits with status 1 if there was one. This run against the record of "
             f"`{record_version or 'none'}`: {perf_guard.verdict(changes)}.", "",
             "```bash", f"make perf{' LOAD=1' if 'load' in results else ''}   # = " + run["command"]]
    lines += [f"# which runs {command}" for command in run["subcommands"]]
    lines += ["```", ""]
    if "engine" in results:
        lines += _engine_lines(results["engine"])
    if "server" in summary:
        lines += _server_lines(results, summary)
    if "browser" in summary:
        lines += _browser_lines(results, summary)
    if "load" in results:
        lines += _load_lines(results["load"])
    else:
        lines += ["Classroom load: not run this time (`make perf LOAD=1` adds it, about 6 minutes).", ""]
    return "\n".join(lines)


def _engine_lines(engine: dict) -> list[str]:
    lines = ["### Engine", "",
             "The traced forward pass (`model.run(...)['probs']`, the whole lazy pass; paper base sizes, "
             "12 + 12 tokens, float64) against PyTorch's encoder and decoder layers on the same inputs; median of "
             "15 runs, the engine's on two sentences in turn (a model remembers the products of its last run, "
             "engine/products.py). Both use 2 threads, which wait for each other when another process holds a "
             "core: on a shared CPU these times swing by several times from run to run.", "",
             "| environment | NumPy's BLAS | engine | PyTorch | engine / PyTorch |", "|---|---|---|---|---|"]
    lines += [f"| {b['title']} | {b['kernel']} | {b['engine_ms']:.1f} ms | {b['torch_ms']:.1f} ms | "
              f"**{b['ratio']:.2f}×** |" for b in engine["blocks"]]
    return lines + [""]


def _server_lines(results: dict, summary: dict) -> list[str]:
    ref, idle = summary["server_reference"], results["server"]["idle_ms_per_s"]
    args = results["run"]["args"]
    lines = ["### Server CPU per rerun", "",
             f"One session per page, {args['reruns']} reruns after {args['warmup']} warm-up ones ({RUNS_KEPT} with "
             "the paper preset: its edits fill the shared cache of engine runs first, see `warmup`); the server's CPU "
             f"time (all threads) from sending a rerun to {SETTLE * 1000:.0f} ms after its `script_finished`. "
             "The reference is the trivial page with the same kind of input (a one-cell grid for a grid edit, its "
             "number input for a number input or the sidebar), on a server of its own: each of the page's reruns is "
             "followed by one of the reference's, and each page is read against the reference's reruns paired with "
             "it, so that the machine's load, which drifts over a run, weighs on both alike (the reference's "
             "median moved between "
             + ", ".join(f"{ref[kind]['low']:.1f} and {ref[kind]['high']:.1f} ms ({Case('trivial', kind).label})"
                         for kind in ref) + f" from one page to another). The idle servers used "
             f"{idle['app']:.1f} and {idle['trivial']:.1f} ms of CPU per second.", "",
             "| page | rerun | CPU p50 | CPU p90 | reference p50 | × trivial (p50) | × trivial (p90) | latency p50 "
             "| kB sent |",
             "|---|---|---|---|---|---|---|---|---|"]
    for kind in ref:
        lines.append(f"| {Case('trivial', kind).label}, all pairs | {Case('trivial', kind).change} | "
                     f"{ref[kind]['p50']:.1f} ms | {ref[kind]['p90']:.1f} ms | | 1 | 1 | | |")
    worked = [row for row in summary["server"] if "error" in row or row["case"].preset != "paper"]
    for row in worked:
        if "error" in row:
            lines.append(_failure_line(row))
            continue
        lines.append(f"| {row['case'].label} | {row['case'].change} | {row['p50']:.1f} ms | {row['p90']:.1f} ms | "
                     f"{row['ref_p50']:.1f} ms | {row['x_p50']:.1f}× | {row['x_p90']:.1f}× | "
                     f"{row['latency_p50']:.0f} ms | {row['kb_sent']:.0f} |")
    paper = [row for row in summary["server"] if row not in worked]
    if paper:
        lines += ["", "With the paper preset (× trivial, p50): "
                  + ", ".join(f"{row['case'].page} / {row['case'].change} {row['x_p50']:.1f}× ({row['p50']:.0f} ms)"
                              for row in paper) + "."]
    return lines + [""]


def _browser_lines(results: dict, summary: dict) -> list[str]:
    ref = summary["browser_reference"]
    lines = ["### Browser edit-to-update", "",
             "Headless Chromium types into the page (the last cell of row 0 of the first weight editor, its "
             "number input, or the sidebar's source sentence) and presses Enter, one edit to warm up and "
             f"{results['run']['args']['edits']} timed; the time runs until a script run has started, "
             "the page's text (without the grids) has changed and the script state is `notRunning` again. "
             "Reference: the trivial page, same "
             f"kind of input, before and after the pages (medians: grid {ref['grid']['before']:.0f} → "
             f"{ref['grid']['after']:.0f} ms, number input {ref['number']['before']:.0f} → "
             f"{ref['number']['after']:.0f} ms), pooled.", "",
             "| page | edit | median | max | × trivial |", "|---|---|---|---|---|"]
    for kind in ("grid", "number"):
        lines.append(f"| {Case('trivial', kind).label} | {Case('trivial', kind).change} | {ref[kind]['p50']:.0f} ms "
                     "| | 1 |")
    for row in summary["browser"]:
        if "error" in row:
            lines.append(_failure_line(row))
            continue
        note = "" if row["text_changes"] else " †"
        lines.append(f"| {row['case'].label} | {row['case'].change}{note} | {row['median']:.0f} ms | "
                     f"{row['max']:.0f} ms | {row['x']:.1f}× |")
    if not all(row.get("text_changes", True) for row in summary["browser"]):
        lines += ["", "† The page's text does not show the change: timed until the run has started and ended (or, "
                  "where its start and end fall in one frame, until its last message came)."]
    return lines + [""]


def _load_lines(load: dict) -> list[str]:
    app, ref, ratios = load["app"], load["reference"], load["ratios"]
    lines = ["### Classroom load", "",
             f"`{load['command']}`: {app['sessions']} sessions edit the attention page's W_Q every "
             f"{app['interval_s'][0]:g}–{app['interval_s'][1]:g} s for {app['duration_s']:g} s, then the same on the "
             "trivial page (see Classroom load above for the method).", "",
             "| | p50 | p95 | server CPU / rerun | reruns/s | MB / extra session | errors |",
             "|---|---|---|---|---|---|---|"]
    for name, result in (("attention page", app), ("trivial page", ref)):
        lines.append(f"| {name} | {result['latency_ms']['p50']:.0f} ms | {result['latency_ms']['p95']:.0f} ms | "
                     f"{result['server_cpu_per_rerun_s'] * 1000:.0f} ms | {result['reruns_per_s']:.1f} | "
                     f"{result['mb_per_extra_session']:.2f} | {result['errors']} |")
    lines.append("| **ratio** | **" + "** | **".join(
        f"{ratios[name]:.1f}×" if ratios.get(name) else "-"
        for name in ("p50", "p95", "cpu_per_rerun", "reruns_per_s", "mb_per_extra_session")) + "** | |")
    return lines + [""]


def _avg(triple) -> str:
    return " ".join(f"{x:.2f}" for x in triple)


def write_section(path: Path, section: str) -> None:
    """Replace the "## Per page" section (up to the next "## " heading), or add it at the end."""
    text = path.read_text()
    found = re.search(r"^## Per page\n.*?(?=^## |\Z)", text, re.M | re.S)
    if found:
        tail = "\n" if found.end() < len(text) else ""
        text = text[:found.start()] + section.rstrip("\n") + "\n" + tail + text[found.end():]
    else:
        text = text.rstrip("\n") + "\n\n" + section.rstrip("\n") + "\n"
    path.write_text(text)


# ---- main --------------------------------------------------------------------------------------------------

def main(argv=None):
    all_pages = [page for pages in PAGES.values() for page in pages]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", default=",".join(all_pages), help="comma-separated url paths (default: all)")
    parser.add_argument("--reruns", type=int, default=30, help="measured server reruns per page")
    parser.add_argument("--warmup", type=int, default=5, help="server reruns per page before those")
    parser.add_argument("--edits", type=int, default=7, help="timed browser edits per page")
    parser.add_argument("--paper", action="store_true", help="also measure each page's server CPU per rerun with "
                                                             "the paper preset (512-d, 6 + 6 layers)")
    parser.add_argument("--no-server", action="store_true", help="skip the server's CPU per rerun")
    parser.add_argument("--no-browser", action="store_true", help="skip the browser")
    parser.add_argument("--engine", action="store_true", help="also run bench/engine_bench.py")
    parser.add_argument("--load", action="store_true", help="also run bench/load.py (minutes)")
    parser.add_argument("--load-sessions", type=int, default=60)
    parser.add_argument("--load-duration", type=float, default=120)
    parser.add_argument("--source", type=Path, help="serve this copy of the app (default: a copy of the working "
                                                    "tree taken now)")
    parser.add_argument("--write", type=Path, nargs="?", const=DEFAULT_DOC,
                        help=f"replace the 'Per page' section of this file (default {DEFAULT_DOC.relative_to(ROOT)})")
    parser.add_argument("--json", type=Path, help="also write every sample to this file")
    args = parser.parse_args(argv)
    pages = args.pages.split(",")
    unknown = set(pages) - set(all_pages)
    if unknown:
        parser.error(f"not a page of ui/core/navigation.PAGES: {', '.join(sorted(unknown))}")
    command = " ".join(["bench/pages_bench.py"] + (sys.argv[1:] if argv is None else argv))
    record_path = args.write or DEFAULT_DOC
    record = record_path.read_text() if record_path.exists() else ""  # read before this run replaces it
    results = {"run": {"date": datetime.datetime.now().isoformat(timespec="minutes"), "machine": machine(),
                       "version": version(ROOT), "loadavg_before": os.getloadavg(), "command": command,
                       "subcommands": [], "args": {"reruns": args.reruns, "warmup": args.warmup, "edits": args.edits}}}
    print(f"{results['run']['date']}: {results['run']['machine']}; load average {_avg(os.getloadavg())}; "
          f"app {results['run']['version']}", flush=True)
    if args.engine:
        results["engine"] = engine_phase()
        results["run"]["subcommands"].append("bench/engine_bench.py")
    with tempfile.TemporaryDirectory(prefix="perf-") as scratch:
        source = args.source or snapshot(Path(scratch) / "app")
        measure(results, source, cases(pages), args, Path(scratch))
    results["run"]["loadavg_after"] = os.getloadavg()
    summary = summarize(results)
    changes = perf_guard.compare(perf_guard.recorded_ratios(record), new_ratios(summary))
    print(f"\nagainst the figures recorded in {record_path} (`{perf_guard.recorded_version(record)}`):\n"
          + perf_guard.report(changes))
    section = markdown(results, summary, changes, perf_guard.recorded_version(record))
    if args.write:
        write_section(args.write, section)
        print(f"wrote the 'Per page' section of {args.write}")
    else:
        print(section)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=1, default=str) + "\n")
    return 1 if perf_guard.regressions(changes) else 0


def measure(results: dict, source: Path, chosen: list[Case], args, scratch: Path) -> None:
    """The server and browser phases on two servers of the same copy, then the classroom load."""
    with open(scratch / "servers.log", "w") as log:
        app = serve("app.py", free_port(8900, 8999), source, log)
        trivial = None
        try:
            trivial = serve("bench/trivial_app.py", free_port(8900, 8999), source, log)
            if not args.no_server:
                paper = paper_cases(args.pages.split(","), chosen) if args.paper else []
                results["server"] = asyncio.run(server_phase(app, trivial, chosen + paper, args))
            if not args.no_browser:
                results["browser"] = browser_phase(app, trivial, chosen, args.edits)
        finally:
            for server in filter(None, (app, trivial)):
                server.process.kill()
                server.process.wait()
    if args.load:
        results["load"] = load_phase(source, args.load_sessions, args.load_duration, scratch / "load.json")
        results["run"]["subcommands"].append(results["load"]["command"])


if __name__ == "__main__":
    sys.exit(main())
