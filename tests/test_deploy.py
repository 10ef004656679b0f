"""The classroom deployment (deploy/, Dockerfile): the nginx config renders and passes `nginx -t`, its upload cap
is the app's, the Dockerfile follows Streamlit's deployment guide, and two Streamlit processes behind nginx
keep every browser on one process, and weights trained on one process open on the other (a shared directory).

`make test` and `make classroom` install nginx; elsewhere the nginx tests are skipped, except under CI=true.
No Docker daemon is needed: the Dockerfile is read, not built.
"""
import asyncio
import fcntl
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.request
from collections import defaultdict
from pathlib import Path
from urllib.parse import parse_qsl

import pytest

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "deploy", ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from classroom import TEMPLATE, nginx_command, render  # noqa: E402
from conftest import in_own_thread  # noqa: E402
from websockets.asyncio.client import connect  # noqa: E402
from websockets.exceptions import InvalidStatus  # noqa: E402
from protocol import Session  # noqa: E402
from ui.core.i18n import translator  # noqa: E402

NGINX = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin")
if NGINX is None and os.environ.get("CI") == "true":
    raise RuntimeError("nginx is missing (CI=true: the classroom tests must run; `make test` installs it)")
needs_nginx = pytest.mark.skipif(NGINX is None, reason="nginx is not installed (make test installs it)")
TIMEOUT = 120  # seconds for two Streamlit processes to start on a busy machine
LOG_LINE = re.compile(r'"(?P<request>[^"]*)" (?P<status>\d+) \d+ upstream=(?P<upstream>\S+) route=(?P<route>\S+)')


def instructions(path: Path) -> list[tuple[str, str]]:
    """A Dockerfile's instructions as (KEYWORD, arguments), comments dropped and continued lines joined."""
    text = re.sub(r"\\\n", " ", path.read_text())
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1] if " " in line else "") for line in lines]


def test_nginx_config_renders_for_two_processes(tmp_path):
    text = render(listen="127.0.0.1:8800", backend_ports=[8801, 8802], run_dir=tmp_path)
    assert not re.search(r"\{\{\w+\}\}", text)
    assert "listen 127.0.0.1:8800;" in text
    upstream = text[text.index("upstream streamlit"):text.index("server {")]
    assert re.findall(r"server (\S+) max_fails=1 fail_timeout=10s;", upstream) == ["127.0.0.1:8801", "127.0.0.1:8802"]
    assert "hash $classroom_route;" in upstream
    server = text[text.index("server {"):text.index("location /")]  # both locations inherit these
    assert "proxy_next_upstream error timeout;" in server and "proxy_connect_timeout 2s;" in server
    stream = text[text.index("location /_stcore/stream"):]
    assert "proxy_set_header Upgrade $http_upgrade;" in stream
    assert 'proxy_set_header Connection "upgrade";' in stream
    assert "proxy_set_header Host $http_host;" in stream  # with the port, for Streamlit's Origin check
    assert f"pid {tmp_path.resolve()}/nginx.pid;" in text


def test_nginx_upload_cap_is_the_apps_plus_the_multipart_envelope():
    from ui.lessons.training_views import MAX_UPLOAD_MB

    server = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text()).get("server", {})
    assert server.get("maxUploadSize", MAX_UPLOAD_MB) == MAX_UPLOAD_MB
    assert re.findall(r"client_max_body_size (\d+)m;", TEMPLATE.read_text()) == [str(MAX_UPLOAD_MB + 1)]


@needs_nginx
def test_nginx_accepts_the_rendered_config(tmp_path):
    config = tmp_path / "nginx.conf"
    config.write_text(render(listen="127.0.0.1:8800", backend_ports=[8801, 8802], run_dir=tmp_path))
    (tmp_path / "tmp").mkdir()
    checked = subprocess.run(nginx_command(config, tmp_path, "-t"), capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr


def test_dockerfile_follows_streamlit_deployment_guide():
    steps = instructions(ROOT / "Dockerfile")
    assert steps[0] == ("FROM", "python:3.11-slim")
    keywords = [keyword for keyword, _ in steps]
    assert ("EXPOSE", "8501") in steps
    installs = [args for keyword, args in steps if keyword == "RUN" and "pip" in args]
    assert installs and all("-r requirements.txt" in args and "requirements-dev" not in args for args in installs)
    copies = [index for index, (keyword, _) in enumerate(steps) if keyword == "COPY"]
    pip = next(index for index, (keyword, args) in enumerate(steps) if keyword == "RUN" and "pip" in args)
    assert steps[copies[0]][1].startswith("requirements.txt") and copies[0] < pip < copies[1]  # a layer that code
    assert steps[copies[1]] == ("COPY", ". .")  # edits do not rebuild; then the app, less what .dockerignore says
    healthcheck = [args for keyword, args in steps if keyword == "HEALTHCHECK"]
    assert len(healthcheck) == 1 and "http://localhost:8501/_stcore/health" in healthcheck[0]
    entrypoint = [args for keyword, args in steps if keyword == "ENTRYPOINT"]
    assert [json.loads(args) for args in entrypoint] == [
        ["streamlit", "run", "app.py", "--server.port=8501", "--server.address=0.0.0.0"]]
    assert keywords.index("ENTRYPOINT") == len(keywords) - 1


def test_dockerignore_leaves_out_the_venv_build_caches_and_history():
    ignored = {line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()
               if line.strip() and not line.startswith("#")}
    assert {".venv", "build", ".git", "**/__pycache__", ".pytest_cache"} <= ignored


# ---- two processes behind nginx, through the launcher -------------------------------------------------------

def free_port_run(count: int, low=8800, high=8899) -> int:
    """The first of `count` consecutive free local ports."""
    for first in random.sample(range(low, high - count + 2), high - count + 2 - low):
        sockets = [socket.socket() for _ in range(count)]
        try:
            for offset, s in enumerate(sockets):
                s.bind(("127.0.0.1", first + offset))
            return first
        except OSError:
            continue
        finally:
            for s in sockets:
                s.close()
    raise RuntimeError(f"no {count} consecutive free ports in {low}-{high}")



@pytest.fixture(scope="module")
def classroom(tmp_path_factory, classroom_env):
    """`deploy/classroom.py --processes 2` on free ports, weights in run_dir/weights, rooms in run_dir/rooms.sqlite3,
    with classroom_env added to the processes' environment (conftest.py: none; a module overrides it, e.g. with a
    TRANSFORMER_REDIS_URL); yields (url, pids, run_dir); SIGTERM stops it. One per module: its tests read what they
    made only (their own routes' log lines, their own weights)."""
    tmp_path = tmp_path_factory.mktemp("classroom")
    pids_file = tmp_path / "pids.json"
    # One classroom starts at a time on this machine (test_failover.py's too, in another process under pytest -n):
    # between finding three free ports and binding them, another could find the same ones.
    with open(Path(tempfile.gettempdir()) / "transformer-classroom-ports.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        port = free_port_run(3)
        launcher = subprocess.Popen([sys.executable, str(ROOT / "deploy" / "classroom.py"), "--processes", "2",
                                     "--port", str(port), "--address", "127.0.0.1", "--run-dir", str(tmp_path),
                                     "--weights-dir", str(tmp_path / "weights")],
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                    env={**os.environ, "TRANSFORMER_ROOMS_DB": str(tmp_path / "rooms.sqlite3"),
                                         **classroom_env})
        deadline = time.monotonic() + TIMEOUT
        while not pids_file.exists() and launcher.poll() is None and time.monotonic() < deadline:
            time.sleep(0.25)
    try:
        assert launcher.poll() is None, f"the launcher exited: {launcher.stdout.read()}"
        assert pids_file.exists(), "the classroom did not start in time"
        pids = json.loads(pids_file.read_text())
        yield pids["url"], pids, tmp_path
        launcher.send_signal(signal.SIGTERM)
        assert launcher.wait(timeout=30) == 0
        assert not pids_file.exists()
        for pid in [pids["nginx"], *pids["streamlit"].values()]:
            assert not Path(f"/proc/{pid}").exists(), f"process {pid} outlived the launcher"
    finally:
        if launcher.poll() is None:
            launcher.kill()  # its processes get SIGTERM from the kernel (PR_SET_PDEATHSIG)
            launcher.wait()


@needs_nginx
def test_nginx_keeps_each_browser_on_one_process(classroom):
    url, pids, run_dir = classroom
    with urllib.request.urlopen(f"{url}/overview", timeout=30) as page:
        assert page.status == 200 and b"<html" in page.read(2000).lower()
        cookie = page.headers["Set-Cookie"]
    assert re.match(r"classroom_route=[0-9a-f]{32}; Path=/; HttpOnly; SameSite=Lax", cookie)

    routes = [f"route-{i}" for i in range(8)]  # fixed, so the hash spreads them the same way every run

    async def browse(route):  # a browser's requests after the page: a health check, the websocket
        headers = {"Cookie": f"classroom_route={route}", "Origin": url}  # Origin: Streamlit checks it
        request = urllib.request.Request(f"{url}/_stcore/health", headers=headers)
        await asyncio.to_thread(lambda: urllib.request.urlopen(request, timeout=30).read())
        session = await Session.open(url, "overview", headers=headers, timeout=TIMEOUT)
        try:
            assert session.last.status is not None and not session.last.exceptions
        finally:
            await session.close()

    async def scenario():
        for route in routes:  # one after the other: the first run on each process is its slowest
            await browse(route)

    in_own_thread(scenario)
    upstreams = defaultdict(set)
    for _ in range(40):  # nginx writes a websocket's line when it closes
        upstreams.clear()
        for line in (run_dir / "access.log").read_text().splitlines():
            entry = LOG_LINE.search(line)
            if entry and entry["route"] in routes:
                upstreams[entry["route"]].add((entry["upstream"], "stream" in entry["request"]))
        if sum(stream for found in upstreams.values() for _, stream in found) == len(routes):
            break
        time.sleep(0.25)
    backends = {f"127.0.0.1:{port}" for port in pids["streamlit"]}
    for route in routes:
        assert {stream for _, stream in upstreams[route]} == {False, True}, f"{route}: {upstreams[route]}"
        assert len({upstream for upstream, _ in upstreams[route]}) == 1, f"{route} moved: {upstreams[route]}"
    assert {upstream for found in upstreams.values() for upstream, _ in found} == backends


@needs_nginx
def test_nginx_passes_the_host_that_streamlit_checks_the_origin_against(classroom):
    """Students type the server's name or LAN address, not localhost (which Streamlit always allows): the
    websocket is accepted when its Origin is the address nginx was asked for, port included."""
    url, _, _ = classroom
    port = int(url.rsplit(":", 1)[1])

    async def handshake(origin):
        try:  # the request says Host: classroom.example:PORT, but goes to nginx on 127.0.0.1
            async with connect(f"ws://classroom.example:{port}/_stcore/stream", host="127.0.0.1", port=port,
                               subprotocols=["streamlit"], additional_headers={"Origin": origin},
                               open_timeout=TIMEOUT) as websocket:
                return websocket.response.status_code
        except InvalidStatus as refused:
            return refused.response.status_code

    async def scenario():
        return [await handshake(f"http://classroom.example:{port}"), await handshake("http://elsewhere.example")]

    assert in_own_thread(scenario) == [101, 403]


@needs_nginx
def test_weights_trained_on_one_process_open_on_the_other(classroom):
    """A teacher trains on one process and shares the link; a student on the other process gets the same weights,
    from the directory that the launcher gives both processes (each process is reached directly here, so the
    test does not depend on where nginx's hash sends a route)."""
    _, pids, run_dir = classroom
    weights_dir = str((run_dir / "weights").resolve())
    for pid in pids["streamlit"].values():
        environ = Path(f"/proc/{pid}/environ").read_text().split("\0")
        assert f"TRANSFORMER_WEIGHTS_DIR={weights_dir}" in environ
    teacher_url, student_url = (f"http://127.0.0.1:{port}" for port in pids["streamlit"])

    async def scenario():
        teacher = await Session.open(teacher_url, "train", timeout=TIMEOUT)
        try:
            assert await teacher.open_tab(r"train\.tab", translator("en")("train.corpus_title"), TIMEOUT)
            teacher.set_widget(teacher.last.widget(r"train\.steps")[1].id, int_value=10)
            teacher.set_widget(teacher.last.widget(r"train\.start")[1].id, trigger_value=True)
            await teacher.rerun(timeout=TIMEOUT)
            link = teacher.query_string
        finally:
            await teacher.close()
        opened = []
        for query in (link, re.sub(r"weights=\w+", "weights=0123456789ab", link)):  # and a link to no weights
            student = await Session.open(student_url, "generate", query_string=query, timeout=TIMEOUT)
            opened.append((dict(parse_qsl(student.query_string)).get("weights"), student.last.texts()))
            await student.close()
        return link, opened

    link, [(kept, texts), (dropped, missing_texts)] = in_own_thread(scenario)
    weights = dict(parse_qsl(link)).get("weights")
    stored = sorted(p.name for p in Path(weights_dir).iterdir())
    # the weights and their origin (ui.stores.weights)
    assert weights and stored == [f"{weights}.json", f"{weights}.npz"]
    gone = translator("en")
    assert kept == weights and not any(gone("msg.weights_gone", id=weights) in text for text in texts), texts
    assert dropped is None and any(gone("msg.weights_gone", id="0123456789ab") in text for text in missing_texts)
