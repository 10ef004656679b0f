"""A classroom server: N Streamlit processes of this app behind nginx, in the foreground; Ctrl-C stops them all.

    .venv/bin/python deploy/classroom.py [--processes 2] [--port 8501] [--address 0.0.0.0]
    make classroom PROCESSES=2                        # the same, after installing nginx if it is missing

nginx listens on --address:--port; the processes listen on the next N ports of 127.0.0.1 only, so students
cannot bypass nginx. Each process is `streamlit run app.py` run from this checkout, so .streamlit/config.toml
applies. nginx keeps every browser on one process with a cookie (deploy/nginx.conf.template says why). Every
process gets the same absolute TRANSFORMER_WEIGHTS_DIR (--weights-dir), so a `?weights=` link made on one process
opens on the others (ui/stores/weights.py).

The run directory (build/classroom/ by default) holds nginx.conf, access.log (with the process that answered
each request), one log per Streamlit process, and pids.json ({"url", "launcher": pid, "nginx": pid,
"streamlit": {port: pid}}), written once everything answers and removed at exit; bench/load.py --pids reads
it. The launcher stops everything when it gets SIGINT or SIGTERM, or when nginx or the last Streamlit process
exits; a Streamlit process that exits is logged, and nginx sends its browsers to the others. If the launcher
itself is killed, the kernel sends its processes SIGTERM.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = Path(__file__).with_name("nginx.conf.template")
START_TIMEOUT = 120  # seconds for a Streamlit process to answer its health check on a busy machine
FAIL_TIMEOUT = 10  # seconds nginx skips a process that refused a connection (deploy/nginx.conf.template)


def render(*, listen: str, backend_ports: list[int], run_dir: Path) -> str:
    """The nginx config for these Streamlit ports, listening on `listen` ("8501" or "127.0.0.1:8800")."""
    fields = {"listen": listen, "run_dir": str(run_dir.resolve()),
              "servers": "\n".join(f"        server 127.0.0.1:{port} max_fails=1 fail_timeout={FAIL_TIMEOUT}s;"
                                    for port in backend_ports)}
    text = TEMPLATE.read_text()
    for name, value in fields.items():
        text = text.replace("{{" + name + "}}", value)
    unfilled = re.findall(r"\{\{\w+\}\}", text)
    if unfilled:
        raise ValueError(f"{TEMPLATE} has fields the launcher does not fill: {', '.join(unfilled)}")
    return text


def nginx_binary() -> str:
    found = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin")
    if found is None:
        raise SystemExit("nginx is not installed: `apt-get install nginx` (make classroom does it)")
    return found


def nginx_command(config: Path, run_dir: Path, *extra: str) -> list[str]:
    return [nginx_binary(), "-p", str(run_dir.resolve()), "-c", str(config.resolve()), "-e", "stderr", *extra]


def _die_with_parent():
    """In the child: the kernel sends SIGTERM when the launcher dies, even by SIGKILL (Linux)."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1: PR_SET_PDEATHSIG


def start_streamlit(port: int, log, weights_dir: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
                             "--server.address", "127.0.0.1"], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                            env={**os.environ, "TRANSFORMER_WEIGHTS_DIR": str(weights_dir.resolve())},
                            preexec_fn=_die_with_parent)


def wait_until_healthy(url: str, name: str, process: subprocess.Popen, deadline: float) -> None:
    """Until GET url/_stcore/health answers; RuntimeError if the process exits first or time runs out."""
    while True:
        try:
            urllib.request.urlopen(f"{url}/_stcore/health", timeout=2)
            return
        except OSError:
            if process.poll() is not None:
                raise RuntimeError(f"{name} exited ({process.returncode})")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} did not answer {url} in time")
            time.sleep(0.25)


def stop(processes: list[subprocess.Popen]) -> None:
    """SIGTERM to each (nginx: fast shutdown; Streamlit: stops its server), then SIGKILL after 10 s."""
    for process in processes:
        if process.poll() is None:
            process.terminate()
    deadline = time.monotonic() + 10
    for process in processes:
        try:
            process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def watch(names: dict[subprocess.Popen, str], nginx: subprocess.Popen) -> None:
    """Until nginx or the last Streamlit process exits. A Streamlit process that dies is not restarted: nginx sends
    its browsers to the others for the rest of the class (a restarted one would get their routes back, and with them
    the downloads and uploads of sessions that now live elsewhere)."""
    running = dict(names)
    while True:
        for process, name in list(running.items()):
            if process.poll() is not None:
                del running[process]
                print(f"{name} exited ({process.returncode})", file=sys.stderr, flush=True)
        if nginx not in running or len(running) == 1:
            print("stopping the others", file=sys.stderr)
            return
        time.sleep(0.5)


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=2, help="how many Streamlit processes")
    parser.add_argument("--port", type=int, default=8501, help="nginx's port; the processes use the next ports")
    parser.add_argument("--address", default="0.0.0.0", help="nginx's address (0.0.0.0: every interface)")
    parser.add_argument("--run-dir", type=Path, default=ROOT / "build" / "classroom")
    parser.add_argument("--weights-dir", type=Path, help="where the processes share trained and loaded weights "
                        "(default: $TRANSFORMER_WEIGHTS_DIR, else build/weights)",
                        default=os.environ.get("TRANSFORMER_WEIGHTS_DIR") or ROOT / "build" / "weights")
    args = parser.parse_args(argv)
    if args.processes < 1:
        parser.error("--processes must be at least 1")

    run_dir = args.run_dir
    (run_dir / "tmp").mkdir(parents=True, exist_ok=True)
    pids_file = run_dir / "pids.json"
    pids_file.unlink(missing_ok=True)
    ports = [args.port + i for i in range(1, args.processes + 1)]
    config = run_dir / "nginx.conf"
    config.write_text(render(listen=f"{args.address}:{args.port}", backend_ports=ports, run_dir=run_dir))
    if subprocess.run(nginx_command(config, run_dir, "-t", "-q")).returncode != 0:  # nginx says why
        return 1

    for stop_signal in (signal.SIGINT, signal.SIGTERM):  # SIGINT too: a shell ignores it in background jobs
        signal.signal(stop_signal, _interrupt)
    names, logs = {}, []  # process -> what it is
    try:
        for port in ports:
            logs.append(open(run_dir / f"streamlit-{port}.log", "wb"))
            names[start_streamlit(port, logs[-1], args.weights_dir)] = f"Streamlit on port {port}"
        deadline = time.monotonic() + START_TIMEOUT
        for (process, name), port in zip(names.items(), ports):
            wait_until_healthy(f"http://127.0.0.1:{port}", name, process, deadline)
        nginx = subprocess.Popen(nginx_command(config, run_dir, "-g", "daemon off;"), preexec_fn=_die_with_parent)
        names[nginx] = "nginx"
        url = f"http://{'127.0.0.1' if args.address == '0.0.0.0' else args.address}:{args.port}"
        wait_until_healthy(url, "nginx", nginx, time.monotonic() + 10)
        pids_file.write_text(json.dumps({"url": url, "launcher": os.getpid(), "nginx": nginx.pid, "streamlit": {
            str(port): process.pid for process, port in zip(names, ports)}}) + "\n")
        backends = ", ".join(f"127.0.0.1:{port}" for port in ports)
        print(f"Classroom server on {args.address}:{args.port} ({url} on this machine): nginx in front of "
              f"Streamlit on {backends}; logs in {run_dir}, shared weights in {args.weights_dir.resolve()}. "
              f"Ctrl-C stops them all.", flush=True)
        watch(names, nginx)
        return 1
    except KeyboardInterrupt:
        return 0
    except RuntimeError as error:
        print(f"{error}; see {run_dir}", file=sys.stderr)
        return 1
    finally:
        for stop_signal in (signal.SIGINT, signal.SIGTERM):  # a second Ctrl-C does not cut the cleanup short
            signal.signal(stop_signal, signal.SIG_IGN)
        stop(list(names))
        pids_file.unlink(missing_ok=True)
        for log in logs:
            log.close()


if __name__ == "__main__":
    sys.exit(main())
