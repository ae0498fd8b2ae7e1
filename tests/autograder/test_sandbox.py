"""The grading sandbox, attacked as a hostile learner would, through the real command line.

Every attack is a submission of the fixture course whose ``add`` is correct only if the attack
worked (it read a solution, reached the network, or got away with its resources). Each is graded
twice: with ``--no-sandbox``, where the attack succeeds (so these tests would fail without the
sandbox), and in the sandbox, where it must fail and cost only that exercise. Attacks that would
harm this machine unconfined (deleting files, a non-local address) run in the sandbox only.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sys
from pathlib import Path

import pytest

from autograder.__main__ import main

from .fixture_course import CORRECT, submission, write

pytestmark = pytest.mark.requires_sandbox
REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "companion"
SITE = Path(json.__file__).parent  # a folder of the Python environment

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
def unconfined(attacks, tmp_path_factory):
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
def confined(attacks, tmp_path_factory):
    course, paths, home = attacks
    before = _tree_hash(course.root, PACKAGE, home) + _tree_hash(SITE)
    out = tmp_path_factory.mktemp("confined") / "marks.json"
    code = main(
        ["grade", *map(str, paths.values()), "--course", str(course.root), "--jobs", "2"]
        + ["--timeout", "30", "--json-file", str(out), "--memory", "1", "--processes", "64"]
    )
    assert code == 0
    after = _tree_hash(course.root, PACKAGE, home) + _tree_hash(SITE)
    rows = json.loads(out.read_text())["submissions"]
    return {name: row for name, row in zip(paths, rows, strict=True)}, before == after


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_the_attack_works_without_the_sandbox(unconfined, name):
    assert _add(unconfined[name])[0] == 2, "the attack should succeed when learner code is free"


@pytest.mark.parametrize("name", sorted({**ATTACKS, **SANDBOX_ONLY}))
def test_the_sandbox_stops_the_attack_and_costs_only_that_exercise(confined, name):
    rows, _ = confined
    row = rows[name]
    assert row["graded"], row["error"]
    assert _add(row)[0] == 0, f"the attack worked in the sandbox: {row}"
    others = [e for e in row["exercises"] if e["name"] != "add"]
    assert all(e["points"] == e["max_points"] for e in others), row


def test_nothing_on_disk_changed(confined):
    assert confined[1], "a file of the course, companion, the environment or the home changed"


def test_first_line_says_which_isolation(demo, tmp_path, capsys):
    course, notebooks, stub = demo
    path = write(tmp_path / "ok.ipynb", submission(stub, CORRECT))
    main(["grade", str(path), "--course", str(course.root)])
    err = capsys.readouterr().err
    assert err.splitlines()[0].startswith("isolation: bubblewrap sandbox")
    main(["grade", str(path), "--course", str(course.root), "--no-sandbox"])
    assert capsys.readouterr().err.splitlines()[0].startswith("isolation: NONE (--no-sandbox)")


def test_missing_bubblewrap_is_refused_with_the_fix(demo, tmp_path, capsys, monkeypatch):
    from autograder import sandbox

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
    from autograder.pool import grade_paths

    course, notebooks, stub = demo
    flood = (
        "def add(a, b):\n    for _ in range(300_000):\n        print('x' * 100)\n    return a + b\n"
    )
    loop = "def add(a, b):\n    while True:\n        pass\n"
    paths = [
        write(tmp_path / "flood.ipynb", submission(stub, {**CORRECT, "ch01_add": flood})),
        write(tmp_path / "loop.ipynb", submission(stub, {**CORRECT, "ch01_add": loop})),
    ]
    flooded, looped = grade_paths(paths, course, jobs=2, timeout=8, isolation="sandbox")
    assert _row(flooded)["add"][0] == 0 and "printed more than" in _row(flooded)["add"][1]
    assert _row(looped)["add"][0] == 0 and "more than 8 s" in _row(looped)["add"][1]
    for result in (flooded, looped):
        assert result.points == 4, str(result)


def _row(result) -> dict:
    return {e.name: (e.points, e.feedback) for e in result.exercises}


def test_sandbox_limits_reach_the_kernel(demo, tmp_path):
    from autograder.pool import grade_paths

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
    from autograder.pool import grade_paths
    from autograder.sandbox import _pids_cgroup_parent

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
    from autograder.sandbox import Isolation, kernel_command, release_cgroup

    argv, cgroup = kernel_command(Isolation("sandbox"), tmp_path, {}, None)
    release_cgroup(cgroup)
    tmpfs = argv.index("--tmpfs")
    binds = [
        i for i, a in enumerate(argv) if a == "--ro-bind" and argv[i + 1] not in ("/usr", "/etc")
    ]
    assert binds and all(i > tmpfs for i in binds), argv
