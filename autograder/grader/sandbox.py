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

Nothing of the grader reaches the kernel. ``bwrap`` itself (pid 1 in the sandbox, whose
``/proc/1/environ`` the kernel can read) is started with the kernel's few variables only, never
the grader's environment; the kernel inherits no descriptor but its standard streams (pipes the
grader drains); a seccomp filter denies ``ptrace``, ``process_vm_readv``/``writev`` and
``pidfd_getfd``, so no process in the sandbox can read or steer another; and a root grader's
kernel runs without capabilities. The Python environment is bound at its real path (and at the
path it was reached by, when that is a symbolic link), so a linked ``.venv`` or home folder works.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import platform
import secrets
import shutil
import struct
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Isolation", "Limits", "SandboxUnavailable", "kernel_python", "resolve"]

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
    reason: str = ""  # why "auto" chose no sandbox

    @property
    def confined(self) -> bool:
        return self.mode == "sandbox"

    def describe(self) -> str:
        """One line for the top of a grading run."""
        if not self.confined:
            why = f"the sandbox cannot run here: {self.reason}" if self.reason else "--no-sandbox"
            return (
                f"isolation: NONE ({why}): learner code runs as you, and can read the "
                "solutions in course/source/, change or delete your files, and use the network"
            )
        limits = self.limits
        processes = f"{limits.processes} processes"
        if os.geteuid() == 0 and _pids_cgroup_parent() is None:
            processes = "processes not limited (root, and no writable pids cgroup)"
        return (
            "isolation: bubblewrap sandbox (read-only Python environment and companion, private "
            "/tmp, no course files, no home, no network, none of your environment variables, "
            f"no ptrace; {limits.memory_bytes / 2**30:g} GiB memory, {processes})"
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
    reason = problem() or kernel_problem(limits)
    if reason is None:
        return Isolation("sandbox", limits)
    if mode == "sandbox":
        raise SandboxUnavailable(reason)
    return Isolation("none", limits, reason)


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


def kernel_python() -> str:
    """This interpreter, by the real path of its folder (``/real/venv/bin/python``).

    The folder is resolved, not the file: a venv's ``python`` is itself a link to the base
    interpreter, and Python finds its environment (``pyvenv.cfg``) next to the path it was run by.
    """
    folder, name = os.path.split(os.path.abspath(sys.executable))
    return os.path.join(os.path.realpath(folder), name)


def kernel_command(
    isolation: Isolation,
    work: Path,
    env: dict[str, str],
    course_root: Path | None,
    command: list[str] | None = None,
) -> tuple[list[str], dict[str, str], str | None]:
    """The argv and environment that start a kernel (``{connection_file}`` left for jupyter_client).

    Args:
        isolation: the sandbox, or none.
        work: the grading folder; its ``ipc`` and ``cwd`` folders are the only writable ones.
        env: variables the kernel needs (the rest of the grader's environment never reaches a
            confined kernel).
        course_root: the course folder, which a confined kernel must not see.
        command: what to run in place of the kernel (the start check runs a short script).

    Returns:
        ``(argv, environment, cgroup)``: start ``argv`` with exactly ``environment``; ``cgroup``
        is a control-group folder made for this kernel (remove it with :func:`release_cgroup`
        after the kernel is gone), or None.
    """
    kernel = command or [kernel_python(), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    if not isolation.confined:
        return kernel, {**os.environ, **env, "IPYTHONDIR": str(work / "ipython")}, None
    limits = isolation.limits
    confine = [sys.executable, "-m", "autograder.grader.confine"]
    confine += ["--data", str(limits.memory_bytes), "--nproc", str(limits.processes)]
    confine += ["--fsize", str(limits.file_bytes)]
    if seccomp_filter() is not None:
        confine += ["--seccomp"]
    cgroup = _make_cgroup(limits.processes) if os.geteuid() == 0 else None
    if cgroup is not None:
        confine += ["--cgroup", cgroup]
    bwrap = [shutil.which("bwrap") or "bwrap", "--unshare-all", "--unshare-user"]
    bwrap += ["--disable-userns", "--die-with-parent", "--clearenv"]
    if os.geteuid() == 0:  # root's kernel would keep every capability of its user namespace
        bwrap += ["--cap-drop", "ALL"]
    bwrap += _system_binds()
    # The private /tmp first: binds made before it would be hidden under it, and the Python
    # environment itself may live in /tmp (a fresh clone in a temporary folder).
    bwrap += ["--proc", "/proc", "--dev", "/dev"]
    bwrap += ["--size", str(limits.tmp_bytes), "--tmpfs", "/tmp"]
    for source, target in _python_binds(course_root):
        bwrap += ["--ro-bind", source, target]
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
    # confine and bwrap (pid 1 in the sandbox, whose environ the kernel can read) get the
    # kernel's variables and nothing else of the grader's
    return confine + ["--"] + bwrap + kernel, dict(values), cgroup


@functools.lru_cache(maxsize=8)
def kernel_problem(limits: Limits | None = None) -> str | None:
    """Why a Python kernel cannot start in the sandbox here, or None when it can.

    Runs this interpreter in the sandbox, exactly as a kernel is run, on a script that imports
    what a kernel needs (under a second on 2 cores), so a broken environment is one line before
    grading rather than a dead kernel in every notebook.
    """
    check = (
        "import sys, importlib.util, ipykernel.kernelapp, autograder.kernel.harness\n"
        "missing = [m for m in ('companion', 'torch') if importlib.util.find_spec(m) is None]\n"
        "if missing:\n"
        "    sys.exit('No module named ' + ', '.join(missing))\n"
    )
    isolation = Isolation("sandbox", limits or Limits())
    with tempfile.TemporaryDirectory(prefix="autograder-check-") as folder:
        work = Path(folder)
        for name in ("ipc", "cwd"):
            (work / name).mkdir()
        argv, env, cgroup = kernel_command(
            isolation, work, {}, None, [kernel_python(), "-c", check]
        )
        try:
            trial = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.SubprocessError) as exc:
            trial = subprocess.CompletedProcess(argv, -1, "", str(exc))
        finally:
            release_cgroup(cgroup)
    if trial.returncode == 0:
        return None
    lines = [line.strip() for line in (trial.stderr + trial.stdout).splitlines() if line.strip()]
    detail = lines[-1][:300] if lines else f"exit status {trial.returncode}"
    return (
        f"a Python kernel cannot start in the sandbox ({detail}); it sees /usr, /etc and, "
        f"read-only, {', '.join(t for _, t in _python_binds(None))}: install ipykernel and this "
        f"project into the environment of {kernel_python()} (pip install -e '.[course]'), keep "
        "the environment and the packages out of the course folder, or pass --no-sandbox to run "
        "learner code unconfined"
    )


# seccomp: what the kernel may not do to another process (read or write its memory, take its
# descriptors), per architecture: (AUDIT_ARCH_*, syscall numbers, lowest number of a foreign ABI)
_DENIED_SYSCALLS = {
    # ptrace, process_vm_readv, process_vm_writev, pidfd_getfd; x32's numbers start at 2**30
    "x86_64": (0xC000003E, (101, 310, 311, 438), 0x40000000),
    "aarch64": (0xC00000B7, (117, 270, 271, 438), None),
}


@functools.lru_cache(maxsize=1)
def seccomp_filter() -> bytes | None:
    """A seccomp BPF program (for ``bwrap --seccomp``) that fails the denied calls with EPERM.

    Calls of another ABI than this machine's (32-bit or x32 code on x86_64) all fail. None on an
    architecture not listed above (the sandbox then runs without the filter).
    """
    entry = _DENIED_SYSCALLS.get(platform.machine())
    if entry is None:
        return None
    arch, numbers, foreign = entry
    load, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06  # BPF_LD|W|ABS, JMP|JEQ|K, JMP|JGE|K, RET|K
    allow, deny = 0x7FFF0000, 0x00050000 | 1  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EPERM
    tests = ([(jge, foreign)] if foreign is not None else []) + [(jeq, n) for n in numbers]
    program = [(load, 0, 0, 4), (jeq, 0, len(tests) + 2, arch), (load, 0, 0, 0)]  # arch, nr
    for index, (code, value) in enumerate(tests):
        program.append((code, len(tests) - index, 0, value))  # match: jump to deny
    program += [(ret, 0, 0, allow), (ret, 0, 0, deny)]
    return b"".join(struct.pack("=HBBI", *instruction) for instruction in program)


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


def _python_binds(course_root: Path | None) -> list[tuple[str, str]]:
    """``(source, target)`` binds of the Python installation, its import path and the two
    packages, never the course: each real folder at its own path, and again at the path it was
    reached by when that differs (a ``.venv`` that is a link, a home folder that is one)."""
    import site

    candidates = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    candidates |= {os.path.dirname(os.path.abspath(sys.executable))}
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

    def holds_course(path: str) -> bool:
        return course is not None and (course == path or course.startswith(path + os.sep))

    def inside(path: str, folders) -> bool:
        return any(path == f or path.startswith(f + os.sep) for f in folders)

    chosen: list[str] = []
    for path in sorted({os.path.realpath(p) for p in candidates}):
        if holds_course(path):
            continue  # a folder holding the course (the repository root) stays out
        if path in ("/", "/usr", "/etc") or not os.path.isdir(path) or inside(path, chosen):
            continue
        chosen.append(path)
    binds = [(path, path) for path in chosen]
    system = (
        "/usr",
        "/etc",
        "/bin",
        "/sbin",
        "/lib",
        "/lib32",
        "/lib64",
        "/libx32",
        "/proc",
        "/dev",
    )
    aliases: list[str] = []
    for path in sorted({os.path.normpath(os.path.abspath(p)) for p in candidates}):
        real = os.path.realpath(path)
        if real == path or not inside(real, chosen) or holds_course(real):
            continue
        if inside(path, chosen) or inside(path, aliases) or inside(path, system) or path == "/tmp":
            continue
        aliases.append(path)
        binds.append((real, path))
    return binds


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
