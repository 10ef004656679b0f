"""Edit-to-update time in headless Chromium: a weight edit on the app's pages vs the trivial page.

    .venv/bin/python bench/app_bench.py [--edits 15] [--rounds 3]

Both apps are served on loopback by this script; the figures that matter are the ratios of medians,
measured in the same browser run. The trivial page is measured twice: with a number input, and with a
one-cell data editor, the widget the app's weight editors use (the grid itself waits ~150 ms before it
sends an edit).
"""
import argparse
import statistics
import subprocess
import time

from load import start_server
from playwright.sync_api import sync_playwright

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
READY = '[data-testid="stApp"][data-test-script-state="notRunning"]'
FORMULA = "(needle) => [...document.querySelectorAll('.katex-display')].find(e => e.innerText.includes(needle))"
CHANGED = f"([needle, before]) => ({FORMULA})(needle)?.innerText !== before"
# Counts changes of the app's script state from now on: one means a run has started. A run short enough to
# end in the same frame as it starts leaves the attribute as it was; its effect on the page shows it instead, or,
# on a page whose text does not show the change, the messages of the run (see RUN_OVER).
WATCH_RUNS = """() => { window.benchRuns = 0; window.benchMessages = 0; window.benchStart = performance.now();
  window.benchObserver?.disconnect();
  window.benchObserver = new MutationObserver(() => window.benchRuns++);
  window.benchObserver.observe(document.querySelector('[data-testid="stApp"]'),
                               {attributeFilter: ['data-test-script-state']}); }"""
# Installed before the app's own scripts: the messages the page's websockets receive, and when the last one came.
COUNT_MESSAGES = """{ const Native = window.WebSocket; window.benchMessages = 0;
  window.WebSocket = class extends Native { constructor(...args) { super(...args); this.addEventListener('message',
    () => { window.benchMessages++; window.benchLastMessage = performance.now(); }); } }; }"""
QUIET_MS = 100  # a run has sent all its messages when none has come for this long
RUN_OVER = f"window.benchMessages > 0 && performance.now() - window.benchLastMessage > {QUIET_MS}"
CELL_EDITOR = "#portal input.gdg-input, #portal textarea.gdg-input"


def launch(playwright):
    """Debian's headless Chromium and a page the size of a laptop screen."""
    browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    page.add_init_script(COUNT_MESSAGES)
    return browser, page


def serve(script: str, port: int) -> subprocess.Popen:
    return start_server(script, port, subprocess.DEVNULL)


def formula_text(page, needle):
    return page.evaluate(f"(needle) => ({FORMULA})(needle)?.innerText", needle)


def timed_edit(page, type_value, needle) -> float:
    """Until the formula that contains needle has changed and the run has finished."""
    return timed_change(page, type_value, CHANGED, [needle, formula_text(page, needle)])


def timed_change(page, type_value, changed: str, arg) -> float:
    """Milliseconds from the Enter that commits what type_value() typed until the JavaScript predicate
    changed(arg) holds or a script run has been seen to start, and then the app's script state is notRunning. A
    run seen only by its messages (its text unchanged, its state flipped within one frame) is timed until its last
    message came."""
    type_value()
    page.evaluate(WATCH_RUNS)
    start = time.perf_counter()
    page.keyboard.press("Enter")
    seen = page.wait_for_function(f"(arg) => window.benchRuns > 0 || ({changed})(arg) ? 'seen' : ({RUN_OVER})",
                                  arg=arg, timeout=30000).json_value()
    page.wait_for_selector(READY)
    if seen != "seen":
        return page.evaluate("window.benchLastMessage - window.benchStart")
    return (time.perf_counter() - start) * 1000


def type_in_cell(page, grid, text: str, x_offset: float = 90) -> None:
    """Double-click row 0 of a data editor (a locator) x_offset pixels from its left edge and type text into
    the cell's editor (Enter commits it)."""
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    page.mouse.dblclick(box["x"] + x_offset, box["y"] + 35 + 17)
    page.locator(CELL_EDITOR).first.fill(text, timeout=5000)


def trivial_edits(page, url, n):
    page.goto(url)
    page.wait_for_selector(READY)
    box = page.get_by_test_id("stNumberInputField")
    return [timed_edit(page, lambda: box.fill(str(i + 2)), "") for i in range(n)]


def grid_edits(page, url, n, needle, x_offset):
    """Type into row 0, column 0 of the first data editor on the page."""
    grid = page.locator('[data-testid="stDataFrame"]').first
    times = []
    for i in range(n):
        times.append(timed_edit(page, lambda: type_in_cell(page, grid, str(i + 2), x_offset), needle))
        time.sleep(0.5)
    return times


def attention_edits(page, url, n):
    """The attention page edits one weight at a time: W_Q of head 1, cell (0, 0), in a number input."""
    page.goto(url)
    page.wait_for_selector(READY)
    page.get_by_text("enc.0.attn.W_Q", exact=True).click()
    box = page.locator('[data-testid="stMain"] [data-testid="stNumberInputField"]').first
    box.wait_for()
    times = []
    for i in range(n):
        times.append(timed_edit(page, lambda: box.fill(str(i + 2)), "scores"))
        time.sleep(0.3)
    return times


def qkv_edits(page, url, n):
    """The Q, K, V page edits W_Q of head 1 in a grid."""
    page.goto(url)
    page.wait_for_selector(READY)
    page.get_by_text("enc.0.attn.W_Q", exact=True).click()  # a rerun draws the grid into the expander
    page.locator('[data-testid="stMain"] [data-testid="stDataFrame"]').first.wait_for()
    time.sleep(1)
    return grid_edits(page, url, n, "q", 90)


def trivial_grid_edits(page, url, n):
    page.goto(url)
    page.wait_for_selector(READY)
    time.sleep(1)
    return grid_edits(page, url, n, "", 90)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--edits", type=int, default=15, help="timed edits per page and round")
    parser.add_argument("--rounds", type=int, default=3, help="the pages take turns this many times, so that "
                        "a change in the machine's load falls on the pages and their references alike")
    args = parser.parse_args()
    servers = [serve("bench/trivial_app.py", 8611), serve("app.py", 8612)]
    measures = {
        "trivial page, number input": lambda page: trivial_edits(page, "http://localhost:8611/", args.edits),
        "trivial page, data editor": lambda page: trivial_grid_edits(page, "http://localhost:8611/?input=grid",
                                                                     args.edits),
        "attention page, number input": lambda page: attention_edits(page, "http://localhost:8612/attention",
                                                                     args.edits),
        "Q, K, V page, data editor": lambda page: qkv_edits(page, "http://localhost:8612/qkv", args.edits),
    }
    results = {name: [] for name in measures}
    try:
        with sync_playwright() as p:
            browser, page = launch(p)
            trivial_edits(page, "http://localhost:8611/", 3)  # warm-up
            for _ in range(args.rounds):
                for name, measure in measures.items():
                    results[name] += measure(page)
            browser.close()
    finally:
        for server in servers:
            server.kill()
    report(results)


def report(results):
    medians = {name: statistics.median(times) for name, times in results.items()}
    for name, times in results.items():
        print(f"{name:30s} edit-to-update: median {medians[name]:5.0f} ms, max {max(times):5.0f} ms "
              f"over {len(times)} edits")
    for page_name, reference in (("attention page, number input", "trivial page, number input"),
                                 ("Q, K, V page, data editor", "trivial page, data editor")):
        print(f"ratio {page_name} / {reference}: {medians[page_name] / medians[reference]:.2f}x "
              "(target: within 2x)")


if __name__ == "__main__":
    main()
