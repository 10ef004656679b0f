"""The tiers of the suite, and fixtures shared by test modules: one Chromium for the whole run (a second sync
Playwright cannot start while the first one's event loop is running). Playwright is imported by the browser
fixtures only, so the tests that use no browser run where it is not installed (tests/test_engine_imports.py).

Tiers. `make test` (CI) runs every test. `make test-fast`, for the edit-test loop, runs the tests marked `fast`: the
modules of FAST_MODULES (the engine without PyTorch or training, the pure UI, the import and security source checks,
the internals guard, `make perf`'s regression guard, what follows from the step tables: the presenter's rail and
backpropagation, test_declarations.py) and one app run of every page in English, each section counted from 1, a step
page's steps and editors those of the engine (test_every_page.py), less any test marked `browser` (it uses
Chromium), `server` (it starts a server: Streamlit, Redis, nginx), `slow` or `hostile`; the pure UI's diagram at its
narrowest and widest screens only. The `browser` and `server` marks are given here, from the fixtures a test uses;
`slow` and `hostile` where the tests are. Hypothesis runs with the profile of its tier: "full" (`make test`: a
test's own number of examples, sized for a pull request), or "fast" (--hypothesis-profile=fast: at most
FAST_EXAMPLES each); on demand, "large" (--hypothesis-profile=large: the larger number a test gives for a deeper
search, `examples(n, large=…)`).

Threads. Every BLAS and OpenMP pool of the run is one thread (THREADS, set here before NumPy or PyTorch is imported,
so the processes a test starts inherit it too; an explicit setting wins): four pytest-xdist workers on 2 cores, each
with pools of its own, fought over the cores (PyTorch's random-size checks took 416 s so, 57 s pinned). The app pins
its own (ui/core/server.py)."""
import os

THREADS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
for _variable in THREADS:
    os.environ.setdefault(_variable, "1")

import asyncio  # noqa: E402 (after the threads' settings)
import concurrent.futures  # noqa: E402
import contextlib  # noqa: E402
import shutil  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import urllib.request  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

FAST_MODULES = {"test_properties.py", "test_explain.py", "test_lazy_trace.py", "test_bad_numbers.py", "test_blog.py",
                "test_generate.py", "test_incremental.py", "test_cli_and_export.py", "test_lessons.py",
                "test_ui_pure.py", "test_derivations.py", "test_room_watch.py", "test_rooms.py", "test_weights.py",
                "test_engine_imports.py", "test_security.py", "test_streamlit_internals.py", "test_perf_guard.py",
                "test_handout.py", "test_vision_state.py", "test_declarations.py", "test_following.py",
                "test_sections.py", "test_models_dir.py"}
BROWSER_FIXTURES = {"chromium"}
SERVER_FIXTURES = {"server", "fresh_server", "redis_url", "classroom"}
FAST_EXAMPLES = 10
# No deadline in any profile: on a shared 2-core machine an example's time measures the load, not the code.
settings.register_profile("full", deadline=None, print_blob=True)
settings.register_profile("fast", deadline=None, print_blob=True, max_examples=FAST_EXAMPLES)
settings.register_profile("large", deadline=None, print_blob=True)
settings.load_profile("full")


def examples(n: int, large: int | None = None) -> int:
    """A property test's number of examples: n in the full tier, `large` (if the test gives one) in the large profile,
    at most the profile's in the fast one (a test's explicit max_examples would otherwise win over the profile)."""
    profile = settings.get_current_profile_name()
    if profile == "fast":
        return min(n, settings.default.max_examples)
    return large if profile == "large" and large is not None else n


def _fast(item) -> bool:
    if item.path.name == "test_every_page.py":  # one app run of every page, in English
        return item.callspec.params["lang"] == "en"
    if item.path.name == "test_counting.py":  # and the drill-down of every kind of step, counted from 1 (no app)
        return item.originalname == "test_every_kind_of_drill_down_counts_from_one"
    if item.path.name == "test_marian.py":  # the Marian loader's refusals and command line; not transformers' models
        return not any(name.endswith("reference") for name in item.fixturenames)
    if item.originalname == "test_no_arrow_of_the_diagram_crosses_a_label":  # 0.45 s each: the narrowest and the
        return item.callspec.params["width_px"] in (320, 1200)  # widest screens; the four between in `make test`
    return item.path.name in FAST_MODULES


def pytest_ignore_collect(collection_path, config):
    """Under `-m fast` the modules without a fast test are not imported (PyTorch, Playwright: seconds each)."""
    if config.getoption("markexpr") == "fast" and collection_path.suffix == ".py":
        partly = {"test_every_page.py", "test_counting.py", "test_marian.py"}  # modules with some fast tests (_fast)
        return collection_path.name.startswith("test_") and collection_path.name not in FAST_MODULES | partly
    return None


def pytest_collection_modifyitems(config, items):
    for item in items:
        if BROWSER_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.browser)
        if SERVER_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.server)
        if _fast(item) and not any(item.get_closest_marker(mark) for mark in ("browser", "server", "slow", "hostile")):
            item.add_marker(pytest.mark.fast)


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


@pytest.fixture(scope="module")
def classroom_env() -> dict:
    """What test_deploy.py's `classroom` adds to its processes' environment: nothing here; a module that wants its
    classroom elsewhere (rooms in Redis) defines a fixture of this name."""
    return {}


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
