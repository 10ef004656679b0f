"""The server process's own settings (ui/core/server.py), each checked in a fresh Python process."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "bench") not in sys.path:
    sys.path.insert(0, str(ROOT / "bench"))

from conftest import in_own_thread  # noqa: E402
from load import free_port, wait_until_up  # noqa: E402
from protocol import Session  # noqa: E402
from ui.core.i18n import EN  # noqa: E402

# Each new thread (a script run) makes and frees 8 MB in 2 MB arrays four times; the page faults of each round.
ROUNDS = """
import json, resource, threading
import numpy as np
def fault_rounds():
    rounds = []
    def faults():
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        arrays = [np.ones(2**18) for _ in range(4)]
        rounds.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    def script_run():
        for _ in range(4):
            faults()
    for _ in range(3):
        thread = threading.Thread(target=script_run)
        thread.start()
        thread.join()
    return rounds
"""
FAULTS = ROUNDS + """
from ui.core import server
server.configure()
print(json.dumps(fault_rounds()))
"""

# Eight threads (script runs) alive at once, each making a 2 MB array; then glibc's count of its heaps (arenas).
ARENAS = """
import ctypes, json, sys, threading
import numpy as np
from ui.core import server
if sys.argv[1] == "configured":
    server.configure()
together = threading.Barrier(8)
def script_run():
    array = np.ones(2**18)
    together.wait()
threads = [threading.Thread(target=script_run) for _ in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
ctypes.CDLL("libc.so.6").malloc_stats()  # "Arena 0:", "Arena 1:", ... on stderr
"""

BLAS = """
import json
from threadpoolctl import threadpool_info
from ui.core import server
server.configure()
print(json.dumps([info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"]))
"""


def run(code: str, *args: str, output: str = "json"):
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if output == "json" else done.stderr


def test_freed_weight_sized_blocks_are_reused_without_page_faults():
    rounds = run(FAULTS)
    pages = 4 * 2**21 // 4096  # 2048 pages of 4 kB are touched per round
    assert rounds[0] > pages // 2  # the first round maps new memory ...
    assert sorted(rounds)[len(rounds) // 2] < pages // 32  # ... most later ones reuse it (glibc's default: ~1500)


def test_blas_runs_on_one_thread():
    assert run(BLAS) and set(run(BLAS)) == {1}


def test_threads_share_two_heaps():
    def arenas(setting):
        return run(ARENAS, setting, output="stderr").count("Arena ")
    assert arenas("default") > 2  # glibc gives each new thread a heap of its own, up to 8 per core
    assert arenas("configured") == 2


IMPORT_ONLY = """
import json
import numpy
from threadpoolctl import threadpool_info
def blas():
    return [info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"]
before = blas()
import ui.core.sidebar, ui.views.frame, ui.views.steps
print(json.dumps([before, blas()]))
"""


def test_importing_the_app_modules_configures_nothing():
    before, after = run(IMPORT_ONLY)
    assert before and after == before


# A real server (Streamlit's own command line, in this process) with a probe thread: once told that a session has
# run app.py, it reports the BLAS threads and the page faults of weight-sized blocks (ROUNDS) in the server process.
SERVER = ROUNDS + """
import sys
from streamlit.web import cli
from threadpoolctl import threadpool_info
def probe():
    sys.stdin.readline()  # a session has run
    rounds = fault_rounds()
    blas = [info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"]
    print(json.dumps({"blas": blas, "rounds": rounds}), flush=True)
threading.Thread(target=probe, daemon=True).start()
sys.argv = ["streamlit", "run", "app.py", "--server.port", sys.argv[1], "--server.headless", "true"]
cli.main()
"""


@pytest.mark.server
def test_a_real_server_is_configured_by_its_first_session():
    """The settings hold in a server whose first session opens a step page by its link."""
    port = free_port()
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(port)], cwd=ROOT, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        wait_until_up(server, port)
        session = in_own_thread(lambda: _first_session(f"http://localhost:{port}"))
        title = f"# {EN['page.tokens']}\n"  # the link's page, after app.py: its title opens its intro
        assert not session.exceptions and any(text.startswith(title) for text in session.texts())
        server.stdin.write("ran\n")
        server.stdin.flush()
        report = json.loads(next(line for line in server.stdout if line.startswith("{")))
    finally:
        server.kill()
        server.wait()
    assert report["blas"] and set(report["blas"]) == {1}
    pages = 4 * 2**21 // 4096
    assert sorted(report["rounds"])[len(report["rounds"]) // 2] < pages // 32, report["rounds"]


async def _first_session(url):
    session = await Session.open(url, "tokens", timeout=120)
    await session.close()
    return session.last
