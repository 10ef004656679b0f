"""Edit-to-update time in headless Chromium: a weight edit on the attention page vs the trivial page.

    .venv/bin/python bench/app_bench.py [--edits 15]

Both apps are served on loopback by this script; the figure that matters is the ratio of medians,
measured in the same browser run.
"""
import argparse
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
READY = '[data-testid="stApp"][data-test-script-state="notRunning"]'
FORMULA = "(needle) => [...document.querySelectorAll('.katex-display')].find(e => e.innerText.includes(needle))"
CHANGED = f"([needle, before]) => ({FORMULA})(needle)?.innerText !== before"


def serve(script: str, port: int) -> subprocess.Popen:
    server = subprocess.Popen([sys.executable, "-m", "streamlit", "run", script, "--server.port", str(port),
                               "--server.headless", "true"], cwd=ROOT, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    for _ in range(120):
        try:
            urllib.request.urlopen(f"http://localhost:{port}/_stcore/health", timeout=1)
            return server
        except OSError:
            time.sleep(0.5)
    server.kill()
    raise RuntimeError(f"{script} did not start")


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
    times = []
    for i in range(n):
        times.append(timed_edit(page, lambda: box.fill(str(i + 2)), ""))
    return times


def attention_edits(page, url, n):
    page.goto(url)
    page.wait_for_selector(READY)
    page.get_by_text("Edit enc.0.attn.W_Q · Head 1").click()
    time.sleep(1)
    times = []
    for i in range(n):
        grid = page.locator('[data-testid="stDataFrame"]').first.bounding_box()

        def type_value():
            page.mouse.dblclick(grid["x"] + 120, grid["y"] + 35 + 35 + 17)  # row 1, column 0
            time.sleep(0.3)
            page.keyboard.type(str(i + 2))
        times.append(timed_edit(page, type_value, "scores"))
        time.sleep(0.5)
    return times


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
            trivial = trivial_edits(page, "http://localhost:8611/", args.edits)
            attention = attention_edits(page, "http://localhost:8612/attention", args.edits)
            browser.close()
    finally:
        for server in servers:
            server.kill()
    for name, times in (("trivial page", trivial), ("attention page", attention)):
        print(f"{name:15s} edit-to-update: median {statistics.median(times):6.0f} ms, "
              f"max {max(times):6.0f} ms over {len(times)} edits")
    print(f"ratio attention / trivial (medians): {statistics.median(attention) / statistics.median(trivial):.2f}x "
          f"(target: within 2x)")


if __name__ == "__main__":
    main()
