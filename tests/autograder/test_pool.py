"""autograder.grader.pool: parallel grading gives the serial results; a hang stalls no batch."""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

import pytest

from autograder.grader import pool
from autograder.grader.pool import core_slots, default_jobs, grade_paths

from .fixture_course import CORRECT, WRONG, submission, write


def _plain(results):
    return [{**r.to_dict(), "seconds": None} for r in results]


@pytest.fixture(scope="module")
def batch(demo, tmp_path_factory):
    course, _, stub = demo
    folder = tmp_path_factory.mktemp("pool")
    half = {**CORRECT, "ch01_mean": WRONG["ch01_mean"]}
    paths = [
        write(folder / "a.ipynb", submission(stub, CORRECT)),
        write(folder / "b.ipynb", submission(stub, half)),
        write(folder / "c.ipynb", stub),
    ]
    (folder / "d.ipynb").write_text("not json")
    paths.append(folder / "d.ipynb")
    return course, folder, paths


def test_parallel_results_equal_serial_results_in_order(batch):
    course, _, paths = batch
    serial = grade_paths(paths, course, jobs=1, timeout=10)
    parallel = grade_paths(paths, course, jobs=2, timeout=10)
    assert _plain(parallel) == _plain(serial)
    assert [r.points for r in serial] == [6, 3, 0, 0]
    assert [r.graded for r in serial] == [True, True, True, False]


def test_a_hanging_submission_is_stopped_and_the_others_are_graded(batch, monkeypatch):
    course, folder, paths = batch
    # a short folder: the kernels' IPC sockets live below it, and their paths have a length limit
    temporary = Path(tempfile.mkdtemp(prefix="pool-"))
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    stub = json.loads(paths[2].read_text())
    sleepy = submission(stub, CORRECT, extra_cells=[(None, "import time\ntime.sleep(300)")])
    hang = write(folder / "hang.ipynb", sleepy)
    start = time.monotonic()
    done = []
    results = grade_paths(
        [hang, paths[0]],
        course,
        jobs=2,
        timeout=400,
        # room for the other submission on a busy machine (a fixture grading takes 2-15 s)
        submission_timeout=30,
        on_result=done.append,
    )
    assert time.monotonic() - start < 150, "the hanging submission was not stopped"
    assert not results[0].graded and "longer than 30 s" in results[0].error
    assert results[1].points == 6
    assert len(done) == 2
    assert list(temporary.iterdir()) == []  # the killed worker's kernel folder is gone too
    temporary.rmdir()


def test_jobs_are_validated():
    assert default_jobs() >= 1
    with pytest.raises(ValueError, match="jobs must be a positive int"):
        grade_paths([], None, jobs=0)
    with pytest.raises(ValueError, match="timeout must be positive"):
        grade_paths([], None, jobs=1, timeout=0)


# A learner cell that writes the cores and math threads its kernel was given.
CORES_PROBE = """\
import json, os
with open(os.path.join(os.environ["AUTOGRADER_TEST_PROBE"], f"{os.getpid()}.json"), "w") as f:
    json.dump({"cores": sorted(os.sched_getaffinity(0)),
               "threads": os.environ.get("OMP_NUM_THREADS")}, f)
"""


@pytest.mark.skipif(
    not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
    reason="needs CPU affinity and at least 2 cores",
)
def test_parallel_workers_grade_on_their_own_cores(batch, tmp_path, monkeypatch):
    # two kernels that each size their threads from the cores they see must not share cores
    course, folder, paths = batch
    stub = json.loads(paths[2].read_text())
    probe = submission(stub, CORRECT, extra_cells=[(None, CORES_PROBE)])
    subs = [write(folder / f"cores{i}.ipynb", probe) for i in range(2)]
    monkeypatch.setenv("AUTOGRADER_TEST_PROBE", str(tmp_path))  # the kernels inherit it
    results = grade_paths(subs, course, jobs=2, timeout=10, isolation="none")
    assert [r.points for r in results] == [6, 6]
    seen = [json.loads(p.read_text()) for p in sorted(tmp_path.glob("*.json"))]
    assert len(seen) == 2
    first, second = (set(s["cores"]) for s in seen)
    assert first and second and not first & second
    assert first | second <= os.sched_getaffinity(0)
    assert [s["threads"] for s in seen] == [str(len(s["cores"])) for s in seen]


def test_cores_are_dealt_into_disjoint_shares(monkeypatch):
    monkeypatch.setattr(pool.os, "sched_getaffinity", lambda pid: {4, 0, 1, 2, 3}, raising=False)
    assert core_slots(1) == [[0, 1, 2, 3, 4]]
    assert core_slots(2) == [[0, 1], [2, 3, 4]]
    assert core_slots(5) == [[0], [1], [2], [3], [4]]
    assert core_slots(7) == [[0], [1], [2], [3], [4], [0], [1]]  # more jobs than cores
    monkeypatch.delattr(pool.os, "sched_getaffinity", raising=False)
    assert core_slots(2) is None  # no affinity on this OS: the workers are not pinned
