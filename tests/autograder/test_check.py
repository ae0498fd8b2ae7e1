"""``autograder check``: one exercise's hidden tests, the same verdict as grading, in seconds.

On the fixture course (tests/autograder/fixture_course.py): the points equal grading's for right,
wrong, stub, missing and tampered answers; only the cells the exercise needs run (a broken or
hanging cell elsewhere changes nothing); the code last run in the kernel is checked over the saved
file, with notes where they differ; bad input is one clear line; the progress file records it;
the check-server answers requests and keeps a kernel started ahead.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest

from autograder.__main__ import main
from autograder.course import cell_grade_id
from autograder.grader.check import Checker, check_exercise, exercise_names
from autograder.grader.grade import grade_notebook, run_coroutine
from autograder.verdict import CheckResult

from .fixture_course import CORRECT, WRONG, cell_index, submission, write
from .fixture_course import SETUP as SETUP_CODE


def _check(course, path, exercise, **kw):
    return check_exercise(path, course, exercise, isolation="none", **kw)


@pytest.mark.parametrize("answers", [CORRECT, WRONG, {}], ids=["correct", "wrong", "stub"])
def test_each_exercise_gets_the_points_grading_gives(demo, tmp_path, answers):
    course, _, stub = demo
    path = write(tmp_path / "01-demo.ipynb", submission(stub, answers))
    graded = grade_notebook(path, course, isolation="none")
    for exercise in graded.exercises:
        result = _check(course, path, exercise.name)
        assert result.error is None, result.error
        assert (result.points, result.max_points, result.status) == (
            exercise.points,
            exercise.max_points,
            exercise.status,
        ), f"{exercise.name}: check says\n{result}\ngrading says\n{graded}"
        assert " | ".join(result.failures) == ("" if exercise.points else exercise.feedback)


def test_only_the_cells_the_exercise_needs_run(demo, tmp_path):
    course, _, stub = demo
    # a cell that would hang, and one that breaks, neither needed by add
    nb = submission(
        stub,
        CORRECT,
        extra_cells=[(None, "import time\ntime.sleep(600)"), ("ch01_mean", "raise SystemExit(3)")],
    )
    path = write(tmp_path / "01-demo.ipynb", nb)
    result = _check(course, path, "add", timeout=20)
    assert result.points == 2 and result.error is None, result
    assert result.ran == 3 and result.cells == 10  # the setup, add, its tests
    assert result.seconds < 20


def test_a_helper_cell_the_exercise_needs_runs(demo, tmp_path):
    course, _, stub = demo
    nb = submission(
        stub,
        {"ch01_add": "def add(a, b):\n    return plus(a, b)\n"},
        extra_cells=[(None, "def plus(a, b):\n    return a + b\n")],
    )
    result = _check(course, write(tmp_path / "01-demo.ipynb", nb), "add")
    assert result.points == 2, result
    assert result.ran == 4


def test_a_hanging_exercise_is_stopped_with_one_line(demo, tmp_path):
    course, _, stub = demo
    nb = submission(stub, {"ch01_add": "def add(a, b):\n    while True:\n        pass\n"})
    result = _check(course, write(tmp_path / "01-demo.ipynb", nb), "add", timeout=3)
    assert result.points == 0 and result.status == "timeout", result
    assert len(result.failures) == 1 and "more than 3 s" in result.failures[0]


def test_the_code_last_run_is_checked_over_the_saved_file(demo, tmp_path):
    course, _, stub = demo
    saved = submission(stub, WRONG)
    path = write(tmp_path / "01-demo.ipynb", saved)
    add_id = saved["cells"][cell_index(saved, "ch01_add")]["id"]
    ran = {add_id: CORRECT["ch01_add"], "new-cell": "UNUSED = 1\n"}
    result = _check(course, path, "add", sources=ran, order=[add_id, "new-cell"])
    assert result.points == 2, result
    notes = " ".join(result.notes)
    assert "not saved yet" in notes and "1 cell(s) you ran are not in the saved notebook" in notes
    # not run in this kernel: the saved version is checked, and the note says so
    result = _check(course, path, "add", sources={}, order=[])
    assert result.points == 0 and "saved version was checked" in " ".join(result.notes)


def test_exercise_names_accept_grade_id_short_name_and_definition(demo):
    _, _, stub = demo
    names = exercise_names(stub)
    assert names["ch01_mean"] == names["mean"] == "ch01_mean"
    assert names["scale"] == "ch01_scale"


def test_bad_requests_are_one_clear_line(demo, tmp_path):
    course, notebooks, stub = demo
    path = write(tmp_path / "01-demo.ipynb", submission(stub, CORRECT))
    other = _check(course, path, "ch02_double")
    assert other.error and "exercise of chapter 02" in other.error
    unknown = _check(course, path, "median")
    assert unknown.error and "has no exercise 'median'" in unknown.error
    assert "add, mean, scale" in unknown.error
    not_ours = write(tmp_path / "other.ipynb", {"cells": [], "metadata": {}, "nbformat": 4})
    assert "cannot tell which chapter" in _check(course, not_ours, "add").error


def test_check_works_inside_a_running_event_loop(demo, tmp_path):
    """A notebook cell (or a test beside playwright's loop) already runs an event loop: Check
    must not answer 'asyncio.run() cannot be called from a running event loop'."""
    course, _, stub = demo
    path = write(tmp_path / "01-demo.ipynb", submission(stub, CORRECT))

    async def from_a_cell():
        return _check(course, path, "mean")

    result = run_coroutine(from_a_cell())  # in a loop of its own, whatever runs around the test
    assert result.error is None and result.status == "passed", result


def test_a_deleted_exercise_is_checked_as_grading_grades_it(demo, tmp_path):
    course, _, stub = demo

    def drop(nb):
        del nb["cells"][cell_index(nb, "ch01_mean")]

    path = write(tmp_path / "01-demo.ipynb", submission(stub, CORRECT, edit=drop))
    result = _check(course, path, "mean")
    assert result.status == "missing" and result.points == 0, result
    assert "missing (deleted?)" in result.failures[0] and result.hints == []


def test_hints_are_the_clause_and_the_section(demo, tmp_path):
    course, _, stub = demo
    path = write(tmp_path / "01-demo.ipynb", submission(stub, WRONG))
    result = _check(course, path, "mean")
    assert result.hint_steps == 2
    assert result.hints[0]["clause"] == "The arithmetic mean of values."
    text = result.text(hints_shown=1)
    assert "The contract clause this breaks: The arithmetic mean of values." in text
    assert "Where the chapter teaches it" not in text
    (tmp_path / "s").mkdir()
    stub_result = _check(course, write(tmp_path / "s" / "01-demo.ipynb", stub), "mean")
    assert stub_result.hints == [] and stub_result.hint_steps == 0


@pytest.fixture
def cli(demo, capsys):
    course, notebooks, _ = demo

    def run(*args):
        code = main([*args, "--course", str(course.root)])
        out, err = capsys.readouterr()
        return code, out, err

    return run


def test_the_terminal_twin_prints_records_and_speaks_json(cli, demo, tmp_path):
    _, _, stub = demo
    path = write(tmp_path / "01-demo.ipynb", submission(stub, WRONG))
    code, out, _ = cli("check", str(path), "mean", "--hint", "2")
    assert code == 1 and "0 / 3 points" in out and "Where the chapter teaches it" in out
    code, out, _ = cli("check", str(path), "add", "--json")
    data = json.loads(out)
    assert code == 1 and data["exercise"] == "ch01_add" and data["points"] == 0
    record = json.loads((tmp_path / "progress.json").read_text())
    assert record["chapters"]["01-demo"]["mean"]["hints"] == 2
    assert record["chapters"]["01-demo"]["add"]["checks"] == 1
    write(path, submission(stub, CORRECT))
    code, out, _ = cli("check", str(path), "add")
    assert code == 0 and "2 / 2 points" in out
    assert (
        json.loads((tmp_path / "progress.json").read_text())["chapters"]["01-demo"]["add"]["best"]
        == 2
    )
    code, out, _ = cli("progress", str(tmp_path))
    assert code == 0 and "add" in out and "2 / 2" in out


def test_the_terminal_twin_refuses_bad_input_in_one_line(cli, tmp_path):
    code, _, err = cli("check", str(tmp_path / "nope.ipynb"), "add")
    assert code == 2 and "is not a file" in err and len(err.strip().splitlines()) == 1
    code, _, err = cli("check", str(tmp_path), "add", "--timeout", "0")
    assert code == 2 and "--timeout" in err


def test_without_the_hidden_tests_check_points_to_validate(demo, tmp_path, capsys):
    _, _, stub = demo
    path = write(tmp_path / "01-demo.ipynb", stub)
    empty = tmp_path / "no-course"
    empty.mkdir()
    code = main(["check", str(path), "add", "--course", str(empty)])
    err = capsys.readouterr().err
    assert code == 1 and "hidden tests are not on this machine" in err and "Validate" in err
    assert len(err.strip().splitlines()) == 1


def test_the_check_server_answers_and_keeps_a_kernel_ready(demo, tmp_path):
    course, _, stub = demo
    path = write(tmp_path / "01-demo.ipynb", submission(stub, CORRECT))

    async def two_checks():
        checker = Checker(course, isolation="none")
        try:
            first = await checker.check({"notebook": str(path), "exercise": "add"})
            assert checker._warm is not None  # started for the next check
            await asyncio.wait_for(asyncio.shield(checker._warm), 60)
            second = await checker.check({"notebook": str(path), "exercise": "mean"})
            return first, second
        finally:
            await checker.close()

    first, second = run_coroutine(two_checks())
    assert (first.points, second.points) == (2, 3)


def test_the_kernel_ready_ahead_runs_the_first_cells_and_never_stale_ones(
    demo, tmp_path, monkeypatch
):
    """After a check, the next kernel also runs the notebook's cells before the first exercise;
    a check uses them only while the learner's cells are still those: an edited setup cell gets
    a fresh kernel that runs the edit."""
    import autograder.grader.grade as grade_module

    course, _, stub = demo
    path = write(tmp_path / "01-demo.ipynb", submission(stub, CORRECT))
    notebook = json.loads(path.read_text())
    setup_id = next(c["id"] for c in notebook["cells"] if c["cell_type"] == "code")
    seen = []
    real = grade_module.run_steps

    async def spy(steps, tests, **kw):
        warm = kw.get("warm")
        seen.append([step.label for step, _ in warm.ran] if warm is not None else None)
        return await real(steps, tests, **kw)

    monkeypatch.setattr(grade_module, "run_steps", spy)
    edited_setup = SETUP_CODE + "SHIFT = 0.0\n"
    edited_mean = "def mean(values):\n    return sum(values) / len(values) + SHIFT\n"

    async def checks():
        checker = Checker(course, isolation="none")
        try:
            first = await checker.check({"notebook": str(path), "exercise": "add"})
            await asyncio.wait_for(asyncio.shield(checker._warm), 60)
            ahead = [step.label for step in checker._ahead]
            second = await checker.check({"notebook": str(path), "exercise": "scale"})
            await asyncio.wait_for(asyncio.shield(checker._warm), 60)
            mean_id = next(c["id"] for c in notebook["cells"] if cell_grade_id(c) == "ch01_mean")
            sources = {setup_id: edited_setup, mean_id: edited_mean}
            third = await checker.check(
                {"notebook": str(path), "exercise": "mean", "sources": sources}
            )
            return first, second, third, ahead
        finally:
            await checker.close()

    first, second, third, ahead = run_coroutine(checks())
    # the setup cell (after a heading), the only one before the first exercise
    assert ahead == ["cell 2"], ahead
    assert seen == [None, ["cell 2"], None], seen  # the edit was not run ahead: a fresh kernel
    assert (first.points, second.points) == (2, 1)
    assert third.points == 3 and third.status == "passed", third.text()


def test_the_check_server_speaks_json_lines(demo, tmp_path):
    course, _, stub = demo
    path = write(tmp_path / "01-demo.ipynb", submission(stub, WRONG))
    requests = [
        json.dumps({"notebook": str(path), "exercise": "scale"}),
        "not json",
        json.dumps({"notebook": str(path), "exercise": "nope"}),
    ]
    done = subprocess.run(
        [sys.executable, "-m", "autograder", "check-server", "--course", str(course.root)],
        input="\n".join(requests) + "\n",
        capture_output=True,
        text=True,
        timeout=180,
    )
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0 and len(replies) == 3, done.stderr
    assert CheckResult.from_dict(replies[0]).points == 0
    assert "bad request" in replies[1]["error"]
    assert "has no exercise 'nope'" in replies[2]["error"]


def test_cells_run_ahead_are_not_run_again(tmp_path):
    """The kernel started ahead ran the first cells; the run it is handed to goes on from there
    (it replayed them, so run-ahead saved nothing and a cell with side effects ran twice)."""
    from autograder.grader.execute import Step, run_steps, start_warm
    from autograder.grader.sandbox import Isolation

    count = Step("cell", "RUNS = globals().get('RUNS', 0) + 1", "cell 1")
    probe = Step("cell", "assert RUNS == 1, f'the first cell ran {RUNS} times'", "cell 2")
    settings = {"protect": ["builtins"], "timeout": 60, "isolation": Isolation("none")}

    async def run():
        warm = await start_warm(ahead=[count], **settings)
        return await run_steps([count, probe], {}, warm=warm, **settings)

    report = run_coroutine(run())
    assert [o.status for o in report.outcomes] == ["ok", "ok"], report.outcomes[1].evalue
