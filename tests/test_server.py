"""The server process's own settings (ui/server.py), each checked in a fresh Python process."""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Each new thread (a script run) makes and frees 8 MB in 2 MB arrays four times; the page faults of each round.
FAULTS = """
import json, resource, threading
import numpy as np
from ui import server
server.configure()
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
print(json.dumps(rounds))
"""

# Eight threads (script runs) alive at once, each making a 2 MB array; then glibc's count of its heaps (arenas).
ARENAS = """
import ctypes, json, sys, threading
import numpy as np
from ui import server
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
from ui import server
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
