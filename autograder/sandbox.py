"""Confining the kernels that run learner code (Linux, with Debian's ``bubblewrap``).

A confined kernel sees, read-only, the operating system's ``/usr`` and ``/etc``, the Python
environment and the installed ``companion`` and ``autograder`` packages, and, writable, a
private ``/tmp`` and working folder. Nothing else: no course sources, no gradebook, no other
submissions, no ``.git``, no home folder. It has its own network namespace with nothing in it,
its own process namespace (everything it started dies with it), and limits on memory
(``RLIMIT_DATA``), processes (``RLIMIT_NPROC``, and for root a ``pids`` control group, since
the kernel exempts root from ``RLIMIT_NPROC``) and file size. The kernel talks to the grader over
Unix sockets in a folder both can see. No daemon, no setuid helper: ``bwrap`` uses unprivileged
user namespaces.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import secrets
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Isolation", "Limits", "SandboxUnavailable", "resolve"]

_INSTALL_HINT = (
    "install bubblewrap (`sudo apt-get install bubblewrap` on Debian and Ubuntu, `sudo dnf "
    "install bubblewrap` on Fedora), or pass --no-sandbox to run learner code unconfined"
)


class SandboxUnavailable(RuntimeError):
    """The sandbox cannot run here; the message says why and how to fix it."""


@dataclass(frozen=True)
class Limits:
    """What one confined kernel may use.

    Attributes:
        memory_bytes: data memory of each process (``RLIMIT_DATA``).
        processes: processes and threads at once.
        file_bytes: the largest file it may write (``RLIMIT_FSIZE``).
        tmp_bytes: the size of its private ``/tmp``.
    """

    memory_bytes: int = 4 * 2**30
    processes: int = 256
    file_bytes: int = 2**30
    tmp_bytes: int = 1 * 2**30


@dataclass(frozen=True)
class Isolation:
    """How learner code is run: ``mode`` is ``"sandbox"`` or ``"none"``."""

    mode: str
    limits: Limits = field(default_factory=Limits)

    @property
    def confined(self) -> bool:
        return self.mode == "sandbox"

    def describe(self) -> str:
        """One line for the top of a grading run."""
        if not self.confined:
            return (
                "isolation: NONE (--no-sandbox): learner code runs as you, and can read the "
                "solutions in course/source/, change or delete your files, and use the network"
            )
        limits = self.limits
        processes = f"{limits.processes} processes"
        if os.geteuid() == 0 and _pids_cgroup_parent() is None:
            processes = "processes not limited (root, and no writable pids cgroup)"
        return (
            "isolation: bubblewrap sandbox (read-only Python environment and companion, private "
            f"/tmp, no course files, no home, no network; {limits.memory_bytes / 2**30:g} GiB "
            f"memory, {processes})"
        )


def resolve(mode: str = "auto", limits: Limits | None = None) -> Isolation:
    """The isolation to grade with.

    Args:
        mode: ``"sandbox"`` (required: raise if it cannot run), ``"none"`` (unconfined), or
            ``"auto"`` (the sandbox where it works, else none).
        limits: resource limits for confined kernels.

    Raises:
        SandboxUnavailable: ``mode="sandbox"`` where bubblewrap is missing or cannot work.
        ValueError: an unknown mode.
    """
    if mode not in ("sandbox", "none", "auto"):
        raise ValueError(f"isolation must be 'sandbox', 'none' or 'auto', got {mode!r}")
    limits = limits or Limits()
    if mode == "none":
        return Isolation("none", limits)
    reason = problem()
    if reason is None:
        return Isolation("sandbox", limits)
    if mode == "sandbox":
        raise SandboxUnavailable(reason)
    return Isolation("none", limits)


@functools.lru_cache(maxsize=1)
def problem() -> str | None:
    """Why the sandbox cannot run on this machine, or None when it can."""
    if not sys.platform.startswith("linux"):
        return f"the grading sandbox needs Linux's bubblewrap (this is {sys.platform}); " + (
            "pass --no-sandbox to run learner code unconfined"
        )
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return f"bubblewrap (bwrap) is not installed: {_INSTALL_HINT}"
    try:
        trial = subprocess.run(
            [bwrap, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "true"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bubblewrap could not be started ({exc}): {_INSTALL_HINT}"
    if trial.returncode != 0:
        detail = " ".join(trial.stderr.split())[:200]
        return (
            f"bubblewrap cannot create a sandbox here ({detail}): allow unprivileged user "
            "namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 an AppArmor "
            "profile for bwrap), or pass --no-sandbox to run learner code unconfined"
        )
    return None


def kernel_command(
    isolation: Isolation, work: Path, env: dict[str, str], course_root: Path | None
) -> tuple[list[str], str | None]:
    """The argv that starts a kernel (``{connection_file}`` left for jupyter_client to fill).

    Returns:
        ``(argv, cgroup)``: ``cgroup`` is a control-group folder made for this kernel (remove it
        with :func:`release_cgroup` after the kernel is gone), or None.
    """
    kernel = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    if not isolation.confined:
        return kernel, None
    limits = isolation.limits
    confine = [sys.executable, "-m", "autograder.confine", "--data", str(limits.memory_bytes)]
    confine += ["--nproc", str(limits.processes), "--fsize", str(limits.file_bytes)]
    cgroup = _make_cgroup(limits.processes) if os.geteuid() == 0 else None
    if cgroup is not None:
        confine += ["--cgroup", cgroup]
    bwrap = [shutil.which("bwrap") or "bwrap", "--unshare-all", "--die-with-parent", "--clearenv"]
    bwrap += _system_binds()
    # The private /tmp first: binds made before it would be hidden under it, and the Python
    # environment itself may live in /tmp (a fresh clone in a temporary folder).
    bwrap += ["--proc", "/proc", "--dev", "/dev"]
    bwrap += ["--size", str(limits.tmp_bytes), "--tmpfs", "/tmp"]
    for path in _python_paths(course_root):
        bwrap += ["--ro-bind", path, path]
    for name in ("ipc", "cwd"):
        folder = str(work / name)
        bwrap += ["--bind", folder, folder]
    bwrap += ["--chdir", str(work / "cwd"), "--dir", "/tmp/home"]
    values = {
        # the folders holding the two packages: enough to import them even without an install
        # (their parents are empty in the sandbox apart from the packages themselves)
        "PYTHONPATH": os.pathsep.join(_package_parents()),
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "HOME": "/tmp/home",
        "TMPDIR": "/tmp",
        "IPYTHONDIR": "/tmp/ipython",
        "MPLCONFIGDIR": str(work / "cwd" / ".matplotlib"),
        **{k: v for k, v in env.items() if k not in ("HOME", "IPYTHONDIR", "TMPDIR")},
    }
    for key, value in values.items():
        bwrap += ["--setenv", key, value]
    return confine + ["--"] + bwrap + kernel, cgroup


def release_cgroup(cgroup: str | None) -> None:
    """Remove a kernel's control group once its processes are gone (best effort).

    The sandbox's processes take a moment to exit after the kernel is shut down, so this waits
    up to a second; a group still busy then is swept by a later run (see :func:`_sweep`).
    """
    if not cgroup:
        return
    import time

    for _ in range(20):
        try:
            os.rmdir(cgroup)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.05)


def _sweep(parent: str) -> None:
    """Remove the empty control groups that graders which have since exited left behind."""
    for name in os.listdir(parent):
        if not name.startswith("autograder-"):
            continue
        try:
            owner = int(name.split("-")[1])
            os.kill(owner, 0)  # the grader that made it is still running: leave it alone
        except ProcessLookupError:
            try:
                os.rmdir(os.path.join(parent, name))
            except OSError:
                pass  # processes still in it
        except (ValueError, IndexError, PermissionError):
            continue


def _system_binds() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
    for name in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(name):
            args += ["--symlink", os.readlink(name), name]
        elif os.path.isdir(name):
            args += ["--ro-bind", name, name]
    return args


def _package_parents() -> list[str]:
    parents = []
    for package in ("companion", "autograder"):
        spec = importlib.util.find_spec(package)
        for location in (spec.submodule_search_locations or []) if spec else []:
            parent = os.path.dirname(os.path.realpath(location))
            if parent not in parents:
                parents.append(parent)
    return parents


def _python_paths(course_root: Path | None) -> list[str]:
    """The Python installation, its import path and the two packages; never the course."""
    import site

    candidates = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    candidates |= {os.path.dirname(os.path.realpath(sys.executable))}
    user_site = site.getusersitepackages() if site.ENABLE_USER_SITE else None
    if user_site and os.path.isdir(user_site):
        candidates.add(user_site)
    # Not the rest of sys.path: it may hold the working folder (a repository root, a home
    # folder), and with it the solutions. The two packages are bound on their own.
    for package in ("companion", "autograder"):
        spec = importlib.util.find_spec(package)
        for location in (spec.submodule_search_locations or []) if spec else []:
            candidates.add(location)
    course = os.path.realpath(course_root) if course_root is not None else None
    chosen = []
    for path in sorted({os.path.realpath(p) for p in candidates}):
        if course is not None and (course == path or course.startswith(path + os.sep)):
            continue  # a folder holding the course (the repository root) stays out
        if path in ("/", "/usr", "/etc") or not os.path.isdir(path):
            continue
        if any(path.startswith(c + os.sep) for c in chosen):
            continue
        chosen.append(path)
    return chosen


@functools.lru_cache(maxsize=1)
def _pids_cgroup_parent() -> str | None:
    """A folder where root may create ``pids`` control groups (cgroup v1 or v2), or None."""
    for parent, control in (
        ("/sys/fs/cgroup/pids", "pids.max"),
        ("/sys/fs/cgroup", "cgroup.subtree_control"),
    ):
        if os.path.isfile(os.path.join(parent, "cgroup.procs")) and os.access(parent, os.W_OK):
            if control == "cgroup.subtree_control":
                try:
                    enabled = Path(parent, control).read_text().split()
                except OSError:
                    continue
                if "pids" not in enabled:
                    continue
            return parent
    return None


def _make_cgroup(processes: int) -> str | None:
    parent = _pids_cgroup_parent()
    if parent is None:
        return None
    _sweep(parent)
    folder = os.path.join(parent, f"autograder-{os.getpid()}-{secrets.token_hex(4)}")
    try:
        os.mkdir(folder)
        Path(folder, "pids.max").write_text(str(processes))
    except OSError:
        release_cgroup(folder)
        return None
    return folder
