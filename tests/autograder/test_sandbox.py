"""The grading sandbox, attacked as a hostile learner would, through the real command line.

Every attack is a submission of the fixture course whose ``add`` is correct only if the attack
worked (it read a solution, reached the network, or got away with its resources). Each is graded
twice: with ``--no-sandbox``, where the attack succeeds (so these tests would fail without the
sandbox), and in the sandbox, where it must fail and cost only that exercise. Attacks that would
harm this machine unconfined (deleting files, a non-local address, tracing the machine's pid 1)
run in the sandbox only. The grader's own environment holds a secret (``INSTRUCTOR_TOKEN``) that
no result, table or feedback page may show, whatever the submission reads and prints.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.__main__ import main

from .fixture_course import CORRECT, submission, write

pytestmark = pytest.mark.requires_sandbox
REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "companion"
SITE = Path(json.__file__).parent  # a folder of the Python environment
SECRET = "INSTRUCTOR_TOKEN"
SECRET_VALUE = "tok-4f1c9e-never-shown"  # in the grader's environment during these tests

# {name}: what add() returns when the attack worked (a + b) and when it did not (a - b).
ADD = """
def add(a, b):
    return a + b if STOLEN else a - b
"""
ATTACKS = {
    "read_by_path": """
import glob
STOLEN = bool(glob.glob("{course}/source/*/*.ipynb"))
""",
    "read_via_companion_file": """
import companion, pathlib
root = pathlib.Path(companion.__file__).resolve().parents[1]
STOLEN = (root / "course" / "source" / "04-training-loop" / "04-training-loop.ipynb").is_file()
""",
    "read_via_proc_cwd": """
import os
try:
    STOLEN = os.path.isdir(f"/proc/{{os.getppid()}}/cwd/course/source")
except OSError:
    STOLEN = False
""",
    "read_via_symlink": """
import os
try:
    os.symlink("{course}", "course_link")
    STOLEN = bool(os.listdir("course_link/source"))
except OSError:
    STOLEN = False
""",
    "write_marker_files": """
STOLEN = True
for folder in ("{course}/source", "{package}", "{site}", "{home}"):
    try:
        with open(folder + "/ATTACK_MARKER", "w") as handle:
            handle.write("learner code was here")
    except OSError:
        STOLEN = False
""",
    "socket_to_localhost": """
import socket
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=3).close()
    STOLEN = True
except OSError:
    STOLEN = False
""",
    "too_much_memory": """
try:
    hog = bytearray(3 * 2**29)  # 1.5 GiB, over the 1 GiB the test allows
    del hog
    STOLEN = True
except MemoryError:
    STOLEN = False
""",
    "read_grader_environment": """
import glob, os
SEEN = repr(dict(os.environ))
for path in ["/proc/1/environ", "/proc/self/environ", f"/proc/{{os.getppid()}}/environ",
             *glob.glob("/proc/[0-9]*/environ")]:
    try:
        SEEN += open(path, "rb").read().decode(errors="replace")
    except OSError:
        pass
STOLEN = "INSTRUCTOR_" + "TOKEN" in SEEN  # spelt apart: the feedback page shows this code
print(SEEN)
""",
    "ptrace_a_process": """
import ctypes, os, signal, time
libc = ctypes.CDLL(None, use_errno=True)
child = os.fork()
if child == 0:
    time.sleep(10)
    os._exit(0)
STOLEN = libc.ptrace(0x4206, child, 0, 0) == 0  # PTRACE_SEIZE: trace without stopping it
os.kill(child, signal.SIGKILL)
os.waitpid(child, 0)
""",
    "many_processes": """
import os, time
children = []
try:
    for _ in range(120):
        pid = os.fork()
        if pid == 0:
            time.sleep(0.5)
            os._exit(0)
        children.append(pid)
    STOLEN = True
except OSError:
    STOLEN = False
for pid in children:
    os.waitpid(pid, 0)
""",
}
SANDBOX_ONLY = {
    # pid 1 is bwrap's in the sandbox, but this machine's init outside it
    "ptrace_pid_1": """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
STOLEN = libc.ptrace(0x4206, 1, 0, 0) == 0  # PTRACE_SEIZE
for call in (libc.process_vm_readv,):
    buffer = ctypes.create_string_buffer(64)
    local = (ctypes.c_void_p * 2)(ctypes.cast(buffer, ctypes.c_void_p), 64)
    STOLEN = STOLEN or call(1, local, 1, local, 1, 0) >= 0
""",
    # the kernel's descriptors: its standard streams, sockets and event files, never a file or
    # folder of the grader's that it could reopen through /proc/self/fd
    "reopen_inherited_files": """
import os
STOLEN = False
for fd in os.listdir("/proc/self/fd"):
    try:
        target = os.readlink(f"/proc/self/fd/{{fd}}")
    except OSError:
        continue
    if target.startswith("/") and not target.startswith(("/dev/", "/proc/")):
        try:
            with open(f"/proc/self/fd/{{fd}}", "rb") as handle:
                handle.read(1)
            STOLEN = True
        except OSError:
            pass
""",
    "delete_and_overwrite": """
import os
STOLEN = False
for path in ("{package}/__init__.py", "{course}/source/01-demo/01-demo.ipynb"):
    try:
        os.remove(path)
        STOLEN = True
    except OSError:
        pass
try:
    with open("{package}/loop.py", "w") as handle:
        handle.write("raise SystemExit")
    STOLEN = True
except OSError:
    pass
""",
    "socket_to_another_host": """
import socket
try:
    socket.create_connection(("192.0.2.1", 80), timeout=3).close()  # TEST-NET-1
    STOLEN = True
except OSError:
    STOLEN = False
""",
}


def _tree_hash(*folders: Path) -> str:
    digest = hashlib.sha256()
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(str(path).encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()


@pytest.fixture(scope="module")
def listener():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    yield server.getsockname()[1]
    server.close()


@pytest.fixture(scope="module")
def attacks(demo, listener, tmp_path_factory):
    course, notebooks, stub = demo
    folder = tmp_path_factory.mktemp("attacks")
    home = tmp_path_factory.mktemp("home")
    values = {
        "course": course.root.resolve(),
        "package": PACKAGE,
        "site": SITE,
        "home": home,
        "port": listener,
    }
    paths = {}
    for name, code in {**ATTACKS, **SANDBOX_ONLY}.items():
        solutions = {**CORRECT, "ch01_add": code.format(**values) + ADD}
        paths[name] = write(folder / f"{name}.ipynb", submission(stub, solutions))
    return course, paths, home


def _add(row) -> tuple[float, str]:
    return next((e["points"], e["feedback"]) for e in row["exercises"] if e["name"] == "add")


@pytest.fixture(scope="module")
def secret_env():
    with pytest.MonkeyPatch.context() as patch:  # the graders' workers inherit it
        patch.setenv(SECRET, SECRET_VALUE)
        yield


def _everything_shown(out: Path, feedback: Path, printed: str) -> str:
    pages = "".join(p.read_text() for p in sorted(feedback.rglob("*.html")))
    return out.read_text() + pages + printed


@pytest.fixture(scope="module")
def unconfined(attacks, secret_env, tmp_path_factory):
    course, paths, home = attacks
    only = {k: v for k, v in paths.items() if k in ATTACKS}
    out = tmp_path_factory.mktemp("unconfined") / "marks.json"
    code = main(
        ["grade", *map(str, only.values()), "--course", str(course.root), "--jobs", "2"]
        + ["--timeout", "30", "--json-file", str(out), "--no-sandbox"]
    )
    assert code == 0
    rows = json.loads(out.read_text())["submissions"]
    yield {name: row for name, row in zip(only, rows, strict=True)}
    for folder in (course.root / "source", PACKAGE, SITE, home):  # undo the markers
        (folder / "ATTACK_MARKER").unlink(missing_ok=True)


@pytest.fixture(scope="module")
def confined(attacks, secret_env, tmp_path_factory):
    course, paths, home = attacks
    before = _tree_hash(course.root, PACKAGE, home) + _tree_hash(SITE)
    folder = tmp_path_factory.mktemp("confined")
    out, feedback = folder / "marks.json", folder / "feedback"
    with pytest.MonkeyPatch.context() as patch:
        printed = _Printed(patch)
        code = main(
            ["grade", *map(str, paths.values()), "--course", str(course.root), "--jobs", "2"]
            + ["--timeout", "30", "--json-file", str(out), "--memory", "1", "--processes", "64"]
            + ["--feedback", str(feedback)]
        )
    assert code == 0
    after = _tree_hash(course.root, PACKAGE, home) + _tree_hash(SITE)
    rows = json.loads(out.read_text())["submissions"]
    shown = _everything_shown(out, feedback, printed.text())
    return {name: row for name, row in zip(paths, rows, strict=True)}, before == after, shown


class _Printed:
    """What main() prints, captured without capsys (a module-scoped fixture cannot use it)."""

    def __init__(self, patch):
        import io

        self.out, self.err = io.StringIO(), io.StringIO()
        patch.setattr(sys, "stdout", self.out)
        patch.setattr(sys, "stderr", self.err)

    def text(self) -> str:
        return self.out.getvalue() + self.err.getvalue()


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_the_attack_works_without_the_sandbox(unconfined, name):
    assert _add(unconfined[name])[0] == 2, "the attack should succeed when learner code is free"


@pytest.mark.parametrize("name", sorted({**ATTACKS, **SANDBOX_ONLY}))
def test_the_sandbox_stops_the_attack_and_costs_only_that_exercise(confined, name):
    rows = confined[0]
    row = rows[name]
    assert row["graded"], row["error"]
    assert _add(row)[0] == 0, f"the attack worked in the sandbox: {row}"
    others = [e for e in row["exercises"] if e["name"] != "add"]
    assert all(e["points"] == e["max_points"] for e in others), row


def test_nothing_on_disk_changed(confined):
    assert confined[1], "a file of the course, companion, the environment or the home changed"


def test_no_variable_of_the_grader_reaches_any_result(confined, unconfined):
    # unconfined, the submission finds the secret and prints it (so this test can fail) ...
    assert _add(unconfined["read_grader_environment"])[0] == 2
    # ... confined, no path shows it: not /proc/1/environ (bwrap's), /proc/<ppid>/environ,
    # /proc/self/environ or os.environ, and nothing printed, returned or raised carries it
    rows, _, shown = confined
    assert SECRET_VALUE not in shown and SECRET not in shown


# mean raises what it found of the grader's environment: the feedback shows a raised message
LEAK_BY_FEEDBACK = """
import glob, os
SEEN = repr(dict(os.environ))
for path in ["/proc/1/environ", f"/proc/{os.getppid()}/environ", *glob.glob("/proc/*/environ")]:
    try:
        SEEN += open(path, "rb").read().decode(errors="replace").replace("\\0", " ")
    except OSError:
        pass
AT = SEEN.find("INSTRUCTOR")


def mean(values):
    raise ValueError(SEEN[AT:AT + 60] if AT >= 0 else SEEN[:200])
"""


def test_the_grader_environment_never_reaches_feedback(demo, tmp_path, capsys, monkeypatch):
    course, notebooks, stub = demo
    path = write(
        tmp_path / "leak.ipynb", submission(stub, {**CORRECT, "ch01_mean": LEAK_BY_FEEDBACK})
    )
    monkeypatch.setenv(SECRET, SECRET_VALUE)
    shown = {}
    for mode in ("none", "sandbox"):
        out, feedback = tmp_path / mode / "marks.json", tmp_path / mode / "feedback"
        flags = ["--no-sandbox"] if mode == "none" else []
        args = ["grade", str(path), "--course", str(course.root), "--json-file", str(out)]
        code = main([*args, "--feedback", str(feedback), *flags])
        assert code == 0
        shown[mode] = _everything_shown(out, feedback, "".join(capsys.readouterr()))
    assert SECRET_VALUE in shown["none"], "unconfined, the feedback carries the secret"
    assert SECRET_VALUE not in shown["sandbox"] and SECRET not in shown["sandbox"]
    assert "PYTHONPATH" in shown["sandbox"], "the kernel's own variables are what it can see"


def test_first_line_says_which_isolation(demo, tmp_path, capsys):
    course, notebooks, stub = demo
    path = write(tmp_path / "ok.ipynb", submission(stub, CORRECT))
    main(["grade", str(path), "--course", str(course.root)])
    err = capsys.readouterr().err
    assert err.splitlines()[0].startswith("isolation: bubblewrap sandbox")
    main(["grade", str(path), "--course", str(course.root), "--no-sandbox"])
    assert capsys.readouterr().err.splitlines()[0].startswith("isolation: NONE (--no-sandbox)")


def test_missing_bubblewrap_is_refused_with_the_fix(demo, tmp_path, capsys, monkeypatch):
    from autograder.grader import sandbox

    course, notebooks, stub = demo
    path = write(tmp_path / "ok.ipynb", submission(stub, CORRECT))
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    sandbox.problem.cache_clear()
    try:
        code = main(["grade", str(path), "--course", str(course.root)])
    finally:
        sandbox.problem.cache_clear()
    err = capsys.readouterr().err
    assert code == 2 and "apt-get install bubblewrap" in err and "--no-sandbox" in err
    assert len(err.strip().splitlines()) == 1


def test_output_floods_and_hangs_cost_only_their_exercise(demo, tmp_path):
    from autograder.grader.pool import grade_paths

    course, notebooks, stub = demo
    # 9 MB in long lines: just past the 8 MB limit, in a few messages (short lines cost a message
    # each, and 30 MB of them took longer than the timeout on a machine at load 15)
    flood = (
        "def add(a, b):\n    for _ in range(90):\n        print('x' * 100_000)\n    return a + b\n"
    )
    loop = "def add(a, b):\n    while True:\n        pass\n"
    paths = [
        write(tmp_path / "flood.ipynb", submission(stub, {**CORRECT, "ch01_add": flood})),
        write(tmp_path / "loop.ipynb", submission(stub, {**CORRECT, "ch01_add": loop})),
    ]
    flooded, looped = grade_paths(paths, course, jobs=2, timeout=20, isolation="sandbox")
    assert _row(flooded)["add"][0] == 0 and "printed more than" in _row(flooded)["add"][1]
    assert _row(looped)["add"][0] == 0 and "more than 20 s" in _row(looped)["add"][1]
    for result in (flooded, looped):
        assert result.points == 4, str(result)


def _row(result) -> dict:
    return {e.name: (e.points, e.feedback) for e in result.exercises}


def test_sandbox_limits_reach_the_kernel(demo, tmp_path):
    from autograder.grader.pool import grade_paths

    course, notebooks, stub = demo
    probe = f"""
import json, os, resource, socket
with open("limits.json", "w") as handle:
    json.dump({{"data": resource.getrlimit(resource.RLIMIT_DATA)[0], "home": os.environ["HOME"],
               "interfaces": [name for _, name in socket.if_nameindex()],
               "sees_course": os.path.exists({str(course.root)!r})}}, handle)
def add(a, b):
    return a + b if json.load(open("limits.json"))["sees_course"] is False else a - b
"""
    path = write(tmp_path / "probe.ipynb", submission(stub, {**CORRECT, "ch01_add": probe}))
    (result,) = grade_paths([path], course, jobs=1, timeout=20, isolation="sandbox")
    assert result.points == 6, str(result)
    assert sys.platform.startswith("linux") and os.geteuid() >= 0


def test_no_control_group_is_left_behind(demo, tmp_path):
    from autograder.grader.pool import grade_paths
    from autograder.grader.sandbox import _pids_cgroup_parent

    parent = _pids_cgroup_parent()
    if os.geteuid() != 0 or parent is None:
        pytest.skip("pids control groups are used only by root where one is writable")
    course, notebooks, stub = demo
    path = write(tmp_path / "ok.ipynb", submission(stub, CORRECT))
    (result,) = grade_paths([path], course, jobs=1, timeout=20, isolation="sandbox")
    assert result.points == 6
    mine = [d for d in os.listdir(parent) if d.startswith(f"autograder-{os.getpid()}-")]
    assert mine == [], f"control groups left behind: {mine}"


def test_private_tmp_is_mounted_before_the_environment(tmp_path):
    # A Python environment inside /tmp (a fresh clone in a temporary folder) must stay visible.
    from autograder.grader.sandbox import Isolation, kernel_command, release_cgroup

    argv, _, cgroup = kernel_command(Isolation("sandbox"), tmp_path, {}, None)
    release_cgroup(cgroup)
    tmpfs = argv.index("--tmpfs")
    binds = [
        i for i, a in enumerate(argv) if a == "--ro-bind" and argv[i + 1] not in ("/usr", "/etc")
    ]
    assert binds and all(i > tmpfs for i in binds), argv


def test_an_environment_reached_through_a_link_grades(demo, tmp_path):
    # a .venv that is a symbolic link (or a home folder that is one): the kernel must start
    course, notebooks, stub = demo
    path = write(tmp_path / "ok.ipynb", submission(stub, CORRECT))
    link = tmp_path / "linked-venv"
    link.symlink_to(Path(sys.prefix).resolve(), target_is_directory=True)
    python = link / "bin" / Path(sys.executable).name
    assert python.exists() and str(link) in str(python)
    env = {**os.environ, "PYTHONPATH": str(REPO)}  # as an installed autograder would be found
    done = subprocess.run(
        [str(python), "-m", "autograder", "grade", str(path), "--course", str(course.root)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr.startswith("isolation: bubblewrap sandbox"), done.stderr
    assert "chapter 01-demo, 6 / 6 points" in done.stdout, done.stdout


def test_a_kernel_that_cannot_start_is_one_line_before_any_grading(demo, tmp_path, capsys):
    from autograder.grader import sandbox

    course, notebooks, stub = demo
    paths = [write(tmp_path / f"{n}.ipynb", submission(stub, CORRECT)) for n in "ab"]
    sandbox.kernel_problem.cache_clear()
    with pytest.MonkeyPatch.context() as patch:  # a Python the sandbox cannot show
        patch.setattr(sandbox, "kernel_python", lambda: str(tmp_path / "gone" / "bin" / "python"))
        code = main(["grade", *map(str, paths), "--course", str(course.root)])
    sandbox.kernel_problem.cache_clear()
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    line = err.strip()
    assert len(line.splitlines()) == 1, err
    assert "a Python kernel cannot start in the sandbox" in line and "gone/bin/python" in line
    assert "--no-sandbox" in line and "pip install" in line


def test_the_seccomp_filter_denies_only_the_listed_calls():
    import struct

    from autograder.grader.sandbox import _DENIED_SYSCALLS, seccomp_filter

    program = seccomp_filter()
    if program is None:
        pytest.skip("no seccomp filter for this architecture")
    arch, numbers, foreign = _DENIED_SYSCALLS[os.uname().machine]

    def verdict(nr: int, machine: int = arch) -> int:  # a small BPF interpreter
        code = [struct.unpack("=HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]
        pc, acc = 0, 0
        while True:
            op, jt, jf, k = code[pc]
            if op == 0x20:
                acc = {0: nr, 4: machine}[k]
            elif op in (0x15, 0x35):
                pc += jt if (acc == k if op == 0x15 else acc >= k) else jf
            elif op == 0x06:
                return k
            pc += 1

    deny, allow = 0x00050001, 0x7FFF0000
    assert all(verdict(n) == deny for n in numbers)
    assert all(verdict(n) == allow for n in (0, 1, 2, 39, 57, 59, 60, 231) if n not in numbers)
    assert verdict(26, machine=0x40000003) == deny  # another ABI (i386)
    if foreign is not None:
        assert verdict(foreign + 101) == deny
