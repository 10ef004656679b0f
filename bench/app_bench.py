"""Edit-to-update time in headless Chromium: a weight edit on the attention page vs the trivial page.

    .venv/bin/python bench/app_bench.py [--edits 15]

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


def serve(script: str, port: int) -> subprocess.Popen:
    return start_server(script, port, subprocess.DEVNULL)


def formula_text(page, needle):
    return page.evaluate(f"(needle) => ({FORMULA})(needle)?.innerText", needle)


def timed_edit(page, type_value, needle) -> float:
    before = formula_text(page, needle)
    type_value()
    start = time.perf_counter()
    page.keyboard.press("Enter")
    page.wait_for_function(CHANGED, arg=[needle, before], timeout=30000)
    page.wait_for_selector(READY)
    return (time.perf_counter() - start) * 1000


def trivial_edits(page, url, n):
    page.goto(url)
    page.wait_for_selector(READY)
    box = page.get_by_test_id("stNumberInputField")
    return [timed_edit(page, lambda: box.fill(str(i + 2)), "") for i in range(n)]


def grid_edits(page, url, n, needle, x_offset):
    """Type into row 0, column 0 of the first data editor on the page."""
    times = []
    for i in range(n):
        grid = page.locator('[data-testid="stDataFrame"]').first.bounding_box()

        def type_value():
            page.mouse.dblclick(grid["x"] + x_offset, grid["y"] + 35 + 17)
            page.locator("#portal input.gdg-input, #portal textarea.gdg-input").first.fill(str(i + 2))
        times.append(timed_edit(page, type_value, needle))
        time.sleep(0.5)
    return times


def attention_edits(page, url, n):
    page.goto(url)
    page.wait_for_selector(READY)
    page.get_by_text("Edit enc.0.attn.W_Q · Head 1").click()
    time.sleep(1)
    return grid_edits(page, url, n, "scores", 90)


def trivial_grid_edits(page, url, n):
    page.goto(url)
    page.wait_for_selector(READY)
    time.sleep(1)
    return grid_edits(page, url, n, "", 90)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--edits", type=int, default=15)
    args = parser.parse_args()
    servers = [serve("bench/trivial_app.py", 8611), serve("app.py", 8612)]
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            trivial_edits(page, "http://localhost:8611/", 3)  # warm-up
            results = {
                "trivial page, number input": trivial_edits(page, "http://localhost:8611/", args.edits),
                "trivial page, data editor": trivial_grid_edits(page, "http://localhost:8611/?input=grid", args.edits),
                "attention page, data editor": attention_edits(page, "http://localhost:8612/attention", args.edits),
            }
            browser.close()
    finally:
        for server in servers:
            server.kill()
    medians = {name: statistics.median(times) for name, times in results.items()}
    for name, times in results.items():
        print(f"{name:28s} edit-to-update: median {medians[name]:5.0f} ms, max {max(times):5.0f} ms "
              f"over {len(times)} edits")
    attention = medians["attention page, data editor"]
    for reference in ("trivial page, data editor", "trivial page, number input"):
        print(f"ratio attention / {reference}: {attention / medians[reference]:.2f}x (target: within 2x)")


if __name__ == "__main__":
    main()
