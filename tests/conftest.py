"""Fixtures shared by test modules: one Chromium for the whole run (a second sync Playwright cannot start while
the first one's event loop is running). Playwright is imported by the browser fixtures only, so the tests that use
no browser run where it is not installed (tests/test_engine_imports.py)."""
import asyncio
import concurrent.futures
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest


def in_own_thread(scenario):
    """asyncio.run(scenario()) in a thread of its own: the browser fixture's sync Playwright keeps an event loop
    running in the main thread for the rest of the run."""
    with concurrent.futures.ThreadPoolExecutor(1) as thread:
        return thread.submit(lambda: asyncio.run(scenario())).result()


@pytest.fixture(scope="session")
def chromium():
    from playwright.sync_api import sync_playwright

    from test_browser import CHROMIUM, CHROMIUM_ARGS

    if not Path(CHROMIUM).exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{CHROMIUM} is missing (CI=true: the browser tests must run)")
        pytest.skip(f"{CHROMIUM} is missing")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def new_page(chromium):
    from test_browser import LOCALES, WIDTH

    contexts = []

    def make(lang="en"):
        context = chromium.new_context(viewport={"width": WIDTH, "height": 900}, locale=LOCALES[lang])
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory):
    """A real redis-server of its own (Debian's, `make redis`), on a free port in a temporary directory, for the
    session; its URL. Skipped where redis-server is missing, but not under CI=true, where the Redis path must run."""
    binary = shutil.which("redis-server") or shutil.which("redis-server", path="/usr/sbin:/usr/bin")
    if binary is None:
        if os.environ.get("CI") == "true":
            pytest.fail("redis-server is missing (CI=true: the Redis tests must run; `make redis` installs it)")
        pytest.skip("redis-server is missing (`make redis` installs it)")
    port = free_port()
    directory = tmp_path_factory.mktemp("redis")
    server = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(directory),
                               "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: _answers_ping(port), server, "redis-server")
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        server.kill()
        server.wait()


def free_port() -> int:
    """A port no one listens on now (the system's choice)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _answers_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as connection:
            connection.sendall(b"PING\r\n")
            return connection.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def _healthy(url: str) -> bool:
    try:
        urllib.request.urlopen(f"{url}/_stcore/health", timeout=2)
        return True
    except OSError:
        return False


def wait_until(ready, process, what: str, timeout: float = 60) -> None:
    """Until ready() is true, on a busy machine; fails if the process exits first or time runs out."""
    deadline = time.monotonic() + timeout
    while not ready():
        assert process.poll() is None and time.monotonic() < deadline, f"{what} did not start"
        time.sleep(0.1)


@contextlib.contextmanager
def app_server(log_path: Path, env: dict | None = None):
    """`streamlit run app.py` of this checkout on a free port, with env added to the environment; its URL."""
    root = Path(__file__).resolve().parents[1]
    port = free_port()
    with open(log_path, "wb") as log:
        process = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
                                    "--server.headless", "true"], cwd=root, stdout=log, stderr=subprocess.STDOUT,
                                   env={**os.environ, **(env or {})})
        try:
            url = f"http://localhost:{port}"
            wait_until(lambda: _healthy(url), process, "the server")
            yield url
        finally:
            process.kill()
            process.wait()


def page_title(at) -> str:
    """The title of the page an AppTest ran: the first line ("# ...") of the page's first Markdown (frame.intro
    writes the title, the intro and the notes on the settings in one element), or its st.title."""
    if at.main.title:
        return at.main.title[0].value
    return next(m.value for m in at.main.markdown if m.value.startswith("# ")).split("\n", 1)[0][2:]
