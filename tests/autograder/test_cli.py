"""The command line: bad input is one line on stderr, a non-zero status, never a traceback; a
batch shows its progress and each result as soon as it is known."""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

import pytest

from autograder.__main__ import _save, main
from autograder.grader.sandbox import problem

from .fixture_course import CORRECT, WRONG, submission, write


@pytest.fixture
def cli(demo, capsys):
    course, notebooks, stub = demo

    def run(*args):
        extra = ["--no-sandbox"] if args[:1] == ("grade",) and problem() is not None else []
        code = main([*args, *extra, "--course", str(course.root), "--notebooks", str(notebooks)])
        out, err = capsys.readouterr()
        return code, out, err

    return run


def _one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one line on stderr, got:\n{err}"
    assert "Traceback" not in err
    return lines[0]


def _bad_files(tmp_path, stub, demo_notebooks):
    (tmp_path / "binary.ipynb").write_bytes(bytes(range(256)) * 4)
    (tmp_path / "empty.ipynb").write_text("", encoding="utf-8")
    (tmp_path / "text.ipynb").write_text("{ not json", encoding="utf-8")
    old = {"nbformat": 3, "nbformat_minor": 0, "worksheets": [{"cells": []}], "metadata": {}}
    (tmp_path / "old.ipynb").write_text(json.dumps(old), encoding="utf-8")
    other = json.loads((demo_notebooks / "02-extra.ipynb").read_text())
    write(tmp_path / "other.ipynb", other)
    return tmp_path


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("missing.ipynb", "no such file"),
        ("binary.ipynb", "not a text file"),
        ("empty.ipynb", "the file is empty"),
        ("text.ipynb", "not valid notebook JSON"),
        ("old.ipynb", "--nbformat 4"),
        ("other.ipynb", "wrong chapter"),
    ],
)
def test_bad_submissions_are_one_line_each(cli, demo, tmp_path, name, words):
    _bad_files(tmp_path, demo[2], demo[1])
    code, out, err = cli("grade", str(tmp_path / name), "--chapter", "01")
    assert code == 1 and words in out and "Traceback" not in out + err
    assert len([line for line in out.splitlines() if line.strip()]) == 1


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["grade"], "the following arguments are required: PATH"),
        (["grade", "x.ipynb", "--bogus"], "unrecognized arguments: --bogus"),
        (["grade", "x.ipynb", "--jobs", "0"], "--jobs must be at least 1"),
        (["grade", "x.ipynb", "--jobs", "two"], "invalid int value: 'two'"),
        (["grade", "x.ipynb", "--timeout", "-1"], "--timeout must be positive"),
        (["grade", "x.ipynb", "--json-file", "out.ipynb"], "would overwrite a notebook"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
    ],
)
def test_bad_flags_are_one_line_and_exit_2(cli, args, words):
    code, _, err = cli(*args)
    assert code == 2
    assert words in _one_line(err)


def test_outputs_are_checked_before_any_grading(cli, demo, tmp_path):
    (tmp_path / "a_file").write_text("x")
    stub = demo[1] / "01-demo.ipynb"
    for args, words in [
        (["--json-file", str(tmp_path / "a_file" / "marks.json")], "cannot create the folder"),
        (["--json-file", str(tmp_path)], "is a folder"),
        (["--feedback", str(tmp_path / "a_file")], "is a file"),
    ]:
        code, out, err = cli("grade", str(stub), *args)
        assert code == 2 and words in _one_line(err)
        assert out == "", "nothing may be graded before the outputs are known to work"


def test_missing_output_folders_are_created_and_results_kept(cli, demo, tmp_path):
    course, notebooks, stub = demo
    path = write(tmp_path / "sub.ipynb", submission(stub, CORRECT))
    marks = tmp_path / "no" / "such" / "dir" / "marks.json"
    code, out, err = cli(
        "grade", str(path), "--json-file", str(marks), "--feedback", str(tmp_path / "fb")
    )
    assert code == 0, err
    assert json.loads(marks.read_text())["submissions"][0]["points"] == 6
    assert (tmp_path / "fb" / "sub.html").is_file()


def test_a_folder_grades_the_notebooks_inside(cli, demo, tmp_path):
    course, notebooks, stub = demo
    folder = tmp_path / "class"
    (folder / "alice").mkdir(parents=True)
    (folder / "bob" / ".ipynb_checkpoints").mkdir(parents=True)
    write(folder / "alice" / "01-demo.ipynb", submission(stub, CORRECT))
    write(folder / "bob" / "01-demo.ipynb", stub)
    write(folder / "bob" / ".ipynb_checkpoints" / "01-demo-checkpoint.ipynb", stub)
    code, out, err = cli("grade", str(folder), "--jobs", "1")
    assert code == 0, err
    assert "alice/01-demo.ipynb: chapter 01-demo, 6 / 6" in out
    assert "bob/01-demo.ipynb: chapter 01-demo, 0 / 6" in out and "checkpoint" not in out
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = cli("grade", str(empty))
    assert code == 2 and "no .ipynb notebooks" in _one_line(err)


def test_results_that_cannot_be_written_are_kept_elsewhere(tmp_path, capsys):
    assert _save(tmp_path, '{"submissions": []}\n') == 1
    err = capsys.readouterr().err
    spare = Path(err.rsplit("the results are in ", 1)[1].strip())
    assert json.loads(spare.read_text()) == {"submissions": []}
    spare.unlink()


def test_progress_shows_each_result_as_it_comes(demo, tmp_path, monkeypatch):
    # not a terminal: one line per finished notebook on stderr, each result table on stdout
    # as soon as it is known (before the next line of progress), not all at the end
    course, notebooks, stub = demo
    half = {**CORRECT, "ch01_mean": WRONG["ch01_mean"]}
    paths = [
        write(tmp_path / "a.ipynb", submission(stub, CORRECT)),
        write(tmp_path / "b.ipynb", submission(stub, half)),
        write(tmp_path / "c.ipynb", stub),
    ]
    both = io.StringIO()  # stdout and stderr together, in the order they were written
    monkeypatch.setattr(sys, "stdout", both)
    monkeypatch.setattr(sys, "stderr", both)
    extra = ["--no-sandbox"] if problem() is not None else []
    code = main(["grade", *map(str, paths), "--course", str(course.root), "--jobs", "2", *extra])
    assert code == 0
    lines = both.getvalue().splitlines()
    assert "grading 3 notebooks, 2 at a time" in lines
    step = re.compile(r"\[(\d)/3\] (\S+): (\d+ / 6) \(\d+ s\); \d+:\d\d elapsed, about (\S+) left")
    steps = [(i, step.fullmatch(line)) for i, line in enumerate(lines) if step.fullmatch(line)]
    assert [m.group(1) for _, m in steps] == ["1", "2", "3"], lines
    assert steps[-1][1].group(4) == "0:00"
    tables = [i for i, line in enumerate(lines) if ": chapter 01-demo, " in line]
    assert len(tables) == 3
    for (at, match), table, before in zip(steps, tables, [-1] + [i for i, _ in steps]):
        assert before < table < at, "each result is printed when it is known"
        assert lines[table].startswith(f"{match.group(2)}: chapter 01-demo, {match.group(3)}")
    scores = sorted(m.group(3) for _, m in steps)
    assert scores == ["0 / 6", "3 / 6", "6 / 6"]


def test_the_course_source_is_refused_in_one_line(cli, demo, tmp_path):
    course, notebooks, stub = demo
    code, out, err = cli("grade", str(course.root))
    assert code == 2 and out == ""
    line = _one_line(err)
    assert "source notebooks" in line and "not submissions" in line and "verify" in line
    # beside submissions, the sources are left out with one note and the rest is graded
    path = write(tmp_path / "sub.ipynb", submission(stub, CORRECT))
    source = course.root / "source" / "01-demo" / "01-demo.ipynb"
    code, out, err = cli("grade", str(source), str(path), "--jobs", "1")
    assert code == 0, err
    assert "note: left out 1 of the course's source notebooks" in err
    assert "sub.ipynb: chapter 01-demo, 6 / 6" in out and str(source) not in out
