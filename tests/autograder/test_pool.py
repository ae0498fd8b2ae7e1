"""autograder.pool: parallel grading gives the serial results; a hang never stalls the batch."""

from __future__ import annotations

import json
import time

import pytest

from autograder.pool import default_jobs, grade_paths

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


def test_a_hanging_submission_is_stopped_and_the_others_are_graded(batch):
    course, folder, paths = batch
    stub = json.loads(paths[2].read_text())
    sleepy = submission(stub, CORRECT, extra_cells=[(None, "import time\ntime.sleep(120)")])
    hang = write(folder / "hang.ipynb", sleepy)
    start = time.monotonic()
    done = []
    results = grade_paths(
        [hang, paths[0]],
        course,
        jobs=2,
        timeout=100,
        submission_timeout=6,
        on_result=done.append,
    )
    assert time.monotonic() - start < 60
    assert not results[0].graded and "longer than 6 s" in results[0].error
    assert results[1].points == 6
    assert len(done) == 2


def test_jobs_are_validated():
    assert default_jobs() >= 1
    with pytest.raises(ValueError, match="jobs must be a positive int"):
        grade_paths([], None, jobs=0)
    with pytest.raises(ValueError, match="timeout must be positive"):
        grade_paths([], None, jobs=1, timeout=0)
