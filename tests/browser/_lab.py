"""Start the course's labs as the Makefile does, on a private port, and stop everything they start.

``LabServer`` runs ``jupyter lab`` with the Makefile's ``JUPYTER_CONFIG_PATH`` (``lab/learner``
and ``lab/shared`` for ``make lab``; ``lab/instructor`` and ``lab/shared``, from ``course/``, for
``make instructor``), on 127.0.0.1 with a free port and a random token, and with every per-user
Jupyter folder (config, data, runtime, settings, workspaces) inside a temporary folder, so the
tester's own settings and open tabs do not leak in. Every process it starts, kernels included (they run in sessions of their
own), carries a marker in its environment; ``stop`` ends them all, on success or failure.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LEARNER_CONFIG = [ROOT / "lab" / "learner", ROOT / "lab" / "shared"]
INSTRUCTOR_CONFIG = [ROOT / "lab" / "instructor", ROOT / "lab" / "shared"]
_MARKER = "COURSE_BROWSER_TEST_RUN"
# Server log lines that a person would read as trouble: Jupyter's [W]/[E]/[C] levels, and other
# loggers' WARNING/ERROR (nbgrader, ipykernel). The final [C] "received signal" is ours.
_TROUBLE = re.compile(r"^\[(W|E|C) |\b(WARNING|ERROR|CRITICAL)\b|Traceback")
# Printed once per server by tornado 6.5 about jupyter_server 2's own defaults, whatever the lab
# serves: tornado clamps the value it names and jupyter_server's keep-alive works as before (making
# the two agree would close kernel connections every 30 s). Not the course's to fix.
UPSTREAM_NOTICES = ("The websocket_ping_timeout (90000) cannot be longer",)
# A kernel being shut down may still publish its "idle" status after its IOPub event pipe has
# closed; ipykernel 7.4 then prints this traceback (ENOTSOCK in iostream's schedule: its fix for
# the same race in _really_send does not cover the pipe). Seen once in 9 chapters' shutdowns; the
# kernel was going away anyway and nothing was lost. The whole block, and only it, is left out.
_SHUTDOWN_RACE = re.compile(
    r"^ERROR:tornado\.general:Uncaught exception in ZMQStream callback\n"
    r"Traceback \(most recent call last\):\n"
    r"(?:[ ].*\n)*?[ ].*ipykernel/iostream\.py.*\n(?:[ ].*\n)*?"
    r"zmq\.error\.ZMQError: Socket operation on non-socket$",
    re.M,
)


def chromium() -> str | None:
    """The system Chromium's executable, or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LabServer:
    """A ``jupyter lab`` process serving ``root_dir``, started from ``cwd``.

    Args:
        root_dir: the folder the lab serves (a temporary copy).
        cwd: where the server starts (the repository root for ``make lab``, ``course/`` for
            ``make instructor``); nbgrader reads ``nbgrader_config.py`` there.
        config_path: the folders put on ``JUPYTER_CONFIG_PATH``.
        home: a temporary folder for the per-user Jupyter folders and the log.
        env: extra environment for the server and its kernels (``COURSE_FAST``).
    """

    def __init__(self, root_dir: Path, cwd: Path, config_path: list[Path], home: Path, env=None):
        self.root_dir, self.cwd, self.home = Path(root_dir), Path(cwd), Path(home)
        self.port, self.token = free_port(), secrets.token_hex(16)
        self.marker = secrets.token_hex(8)
        self.log_path = self.home / "jupyter-lab.log"
        self.env = self._environment(config_path, env or {})
        self.process: subprocess.Popen | None = None
        self._log = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _environment(self, config_path: list[Path], extra: dict) -> dict:
        env = dict(os.environ)
        env.pop("MPLBACKEND", None)  # the tests' Agg backend would hide every inline figure
        env.pop("JUPYTER_CONFIG_PATH", None)
        folders = {
            "JUPYTER_CONFIG_DIR": "config",
            "JUPYTER_DATA_DIR": "data",
            "JUPYTER_RUNTIME_DIR": "runtime",
            "IPYTHONDIR": "ipython",
            "JUPYTERLAB_SETTINGS_DIR": "settings",
            "JUPYTERLAB_WORKSPACES_DIR": "workspaces",
        }
        for name, folder in folders.items():
            (self.home / folder).mkdir(parents=True, exist_ok=True)
            env[name] = str(self.home / folder)
        # The news prompt (a toast) would cover the cells in screenshots; learners answer it once.
        news = self.home / "settings" / "@jupyterlab" / "apputils-extension"
        news.mkdir(parents=True, exist_ok=True)
        (news / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}')
        env["JUPYTER_CONFIG_PATH"] = os.pathsep.join(str(p) for p in config_path)
        env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
        env[_MARKER] = self.marker
        env.update(extra)
        return env

    def run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        """Run a command (a module of this Python) in the lab's environment, from ``cwd``."""
        return subprocess.run(
            [sys.executable, *args],
            cwd=self.cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def start(self, timeout: float = 180) -> None:
        """Start ``jupyter lab`` and wait until it answers."""
        command = [
            sys.executable,
            "-m",
            "jupyter",
            "lab",
            f"--ServerApp.root_dir={self.root_dir}",
            "--no-browser",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}",
            "--LabApp.expose_app_in_browser=True",  # window.jupyterapp, to read cells' state
        ]
        if hasattr(os, "getuid") and os.getuid() == 0:
            command.append("--allow-root")  # as the Makefile's ROOT_FLAG
        self._log = open(self.log_path, "ab")  # noqa: SIM115 (closed in stop())
        self.process = subprocess.Popen(
            command,
            cwd=self.cwd,
            env=self.env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"jupyter lab exited ({self.process.returncode}):\n{self.tail()}"
                )
            try:
                self.get("/api/status", timeout=5)
                return
            except (OSError, urllib.error.URLError):
                time.sleep(0.3)
        raise TimeoutError(f"jupyter lab did not answer within {timeout:.0f} s:\n{self.tail()}")

    def get(self, path: str, timeout: float = 30) -> tuple[int, str]:
        request = urllib.request.Request(
            self.url + path, headers={"Authorization": f"token {self.token}"}
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, response.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as err:
            return err.code, err.read().decode("utf-8", "replace")

    def page_config(self) -> dict:
        """The page config JupyterLab serves (disabled plugins, extensions)."""
        _, html = self.get("/lab")
        match = re.search(r'id="jupyter-config-data"[^>]*>(.*?)</script>', html, re.S)
        return json.loads(match.group(1)) if match else {}

    def log_text(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def tail(self, chars: int = 4000) -> str:
        return self.log_text()[-chars:] if self.log_path.exists() else ""

    def trouble(self, start: int = 0, end: int | None = None) -> list[str]:
        """Warning and error lines the server printed in characters ``start:end`` of its log."""
        lines = _SHUTDOWN_RACE.sub("", self.log_text()[start:end]).splitlines()
        return [
            line
            for line in lines
            if _TROUBLE.search(line) and not any(n in line for n in UPSTREAM_NOTICES)
        ]

    def stop(self, timeout: float = 30) -> list[int]:
        """Stop the server (its kernels shut down with it), then end anything left behind.

        Returns:
            The ids of processes that had to be killed after the server stopped.
        """
        if self.process is not None and self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(timeout=timeout)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                _kill_group(self.process.pid)
                self.process.wait(timeout=10)
        leftovers = _marked_processes(self.marker)
        for pid in leftovers:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self._log is not None:
            self._log.close()
        return leftovers


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _marked_processes(marker: str) -> list[int]:
    """Processes whose environment carries this run's marker (Linux; elsewhere none are found)."""
    needle = f"{_MARKER}={marker}".encode() + b"\0"
    found = []
    proc = Path("/proc")
    if not proc.is_dir():
        return found
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found
