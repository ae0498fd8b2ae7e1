"""Marks files (autograder/marks.py): course versions, shards graded by separate processes and
merged into what a single run writes, and the bad input that must stop in one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.__main__ import main
from autograder.grader.grade import ExerciseResult, GradeResult
from autograder.grader.sandbox import problem
from autograder.marks import (
    MarksError,
    chapter_version,
    combine,
    learner_of,
    marks_document,
    merge,
    parse_shard,
    read_marks,
    shard_of,
)

from .fixture_course import CORRECT, WRONG, build_course, submission, write

REPO = Path(__file__).resolve().parents[2]
SANDBOX = ["--no-sandbox"] if problem() is not None else []


@pytest.fixture(scope="module")
def klass(demo, tmp_path_factory):
    """Five submissions of 01-demo (one damaged) in nbgrader's submitted/<learner>/<chapter>/."""
    course, _, stub = demo
    root = tmp_path_factory.mktemp("class")
    answers = {
        "ada": CORRECT,
        "bob": WRONG,
        "cy": {**CORRECT, "ch01_mean": WRONG["ch01_mean"]},
        "dee": {**CORRECT, "ch01_add": WRONG["ch01_add"]},
    }
    for learner, solutions in answers.items():
        folder = root / "submitted" / learner / "01-demo"
        folder.mkdir(parents=True)
        write(folder / "01-demo.ipynb", submission(stub, solutions))
    broken = root / "submitted" / "eve" / "01-demo"
    broken.mkdir(parents=True)
    (broken / "01-demo.ipynb").write_text("{ not json", encoding="utf-8")
    return course, root


def _grade(course, root: Path, *extra: str) -> subprocess.Popen:
    command = [sys.executable, "-m", "autograder", "grade", "submitted", "--jobs", "1"]
    command += ["--course", str(course.root), *SANDBOX, *extra]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.Popen(
        command, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _without_times(document: dict) -> dict:
    document = json.loads(json.dumps(document))
    for entry in document["submissions"]:
        entry.pop("seconds")
    return document


def test_shards_graded_by_separate_processes_merge_into_the_single_run(klass):
    course, root = klass
    pages = ["--feedback", "feedback"]  # every shard names the pages as the single run does
    single = _grade(course, root, "--json-file", "single.json", *pages)
    shards = [
        _grade(course, root, "--shard", f"{k}/3", "--json-file", f"shards/{k}.json", *pages)
        for k in (1, 2, 3)
    ]
    for process in [single, *shards]:
        _, err = process.communicate(timeout=600)
        assert process.returncode in (0, 1), err  # 1: the damaged notebook is not graded
        assert "Traceback" not in err
    graded = [read_marks(root / f"shards/{k}.json") for k in (1, 2, 3)]
    assert sorted(len(m.submissions) for m in graded) == [1, 2, 2]
    assert {m.shard["k"] for m in graded} == {1, 2, 3}

    # A shard that failed: its file was cut short. Merge names it; rerun it, and merge again.
    good = (root / "shards/2.json").read_text()
    (root / "shards/2.json").write_text(good[: len(good) // 2])
    code = main(["merge", *[str(root / f"shards/{k}.json") for k in (1, 2, 3)], "--out", "x"])
    assert code == 1
    rerun = _grade(course, root, "--shard", "2/3", "--json-file", "shards/2.json", *pages)
    rerun.communicate(timeout=600)
    merged = merge([read_marks(root / f"shards/{k}.json") for k in (3, 1, 2)])

    single_run = json.loads((root / "single.json").read_text())
    assert _without_times(merged) == _without_times(single_run)
    paths = [e["path"] for e in single_run["submissions"]]
    assert paths == sorted(paths) and len(paths) == 5
    learners = {e["learner"]: e["points"] for e in single_run["submissions"]}
    assert learners == {"ada": 6, "bob": 0, "cy": 3, "dee": 4, "eve": 0}
    assert single_run["course_versions"] == {"01-demo": chapter_version(course.chapter("01"))}
    pages = {e["learner"]: e["feedback"] for e in single_run["submissions"]}
    assert pages["ada"] == "ada/01-demo/01-demo.html"
    assert (root / "feedback" / pages["ada"]).is_file()


def test_merge_refuses_a_missing_or_doubled_shard_and_shards_of_another_run(tmp_path):
    inputs = [f"s{i}.ipynb" for i in range(5)]

    def shard(k, n, paths=inputs, name=None):
        results = [GradeResult(path=p, chapter="01-demo") for p in shard_of(paths, k, n)]
        doc = marks_document(results, _NoCourse(), shard=(k, n), inputs=paths)
        path = tmp_path / (name or f"{k}-{n}.json")
        path.write_text(json.dumps(doc))
        return read_marks(path)

    one, two, three = shard(1, 3), shard(2, 3), shard(3, 3)
    assert [e["path"] for e in merge([three, one, two])["submissions"]] == inputs
    with pytest.raises(MarksError, match=r"shard 2/3 missing .*--shard 2/3"):
        merge([one, three])
    with pytest.raises(MarksError, match="given twice"):
        merge([one, two, three, shard(2, 3, name="again.json")])
    other = shard(3, 3, paths=inputs + ["late.ipynb"], name="other.json")
    with pytest.raises(MarksError, match="other.json: shard 3/3 of other inputs"):
        merge([one, two, other])
    whole = tmp_path / "whole.json"
    whole.write_text(json.dumps({"format": 2, "course_versions": {}, "submissions": []}))
    with pytest.raises(MarksError, match="whole.json: not a shard"):
        merge([read_marks(whole)])


class _NoCourse:
    def chapter(self, name):
        from autograder.course import CourseError

        raise CourseError(name)


@pytest.mark.parametrize(("text", "expected"), [("1/1", (1, 1)), ("3/8", (3, 8)), ("8/8", (8, 8))])
def test_a_shard_is_k_of_n(text, expected):
    assert parse_shard(text) == expected


@pytest.mark.parametrize("text", ["0/3", "4/3", "3", "a/b", "-1/2", "2/0", ""])
def test_a_bad_shard_is_refused_naming_what_was_given(text):
    with pytest.raises(ValueError, match=rf"--shard must be K/N .*got {text!r}"):
        parse_shard(text)


def test_shards_cover_every_input_once():
    paths = [f"{i}.ipynb" for i in range(11)]
    for n in (1, 2, 3, 7, 20):
        chosen = [p for k in range(1, n + 1) for p in shard_of(paths, k, n)]
        assert sorted(chosen) == sorted(paths)


def test_grade_refuses_a_bad_shard_and_a_shard_without_a_file(demo, capsys):
    course, notebooks, _ = demo
    args = ["grade", str(notebooks / "01-demo.ipynb"), "--course", str(course.root), *SANDBOX]
    assert main([*args, "--shard", "4/3", "--json-file", "x.json"]) == 2
    assert "--shard must be K/N" in capsys.readouterr().err
    assert main([*args, "--shard", "1/3"]) == 2
    assert "needs --json-file" in capsys.readouterr().err


def test_the_course_version_changes_with_the_hidden_tests_only(tmp_path):
    from autograder.course import Course

    course = Course(build_course(tmp_path)[0])
    before = chapter_version(course.chapter("01"))
    source = course.chapter("01").source
    nb = json.loads(source.read_text())
    nb["cells"][0]["source"] = "# Chapter 1, retitled"
    source.write_text(json.dumps(nb))
    assert chapter_version(course.chapter("01")) == before
    for cell in nb["cells"]:
        if "_ADD_CASES = {0: (2.0, 3.5)" in "".join(cell["source"]):
            cell["source"] = "".join(cell["source"]).replace("(2.0, 3.5)", "(2.0, 4.5)")
    source.write_text(json.dumps(nb))
    assert chapter_version(course.chapter("01")) != before


def _marks(path: Path, versions=None, paths=("a/01-demo.ipynb",), fmt=2) -> Path:
    entries = [
        GradeResult(
            path=p,
            chapter="01-demo",
            exercises=[ExerciseResult("ch01_add", 2, 2, "passed", "passed")],
        ).to_dict()
        for p in paths
    ]
    data = {"submissions": entries}
    if fmt is not None:
        data = {"format": fmt, "course_versions": versions or {"01-demo": "aaaa"}, **data}
    path.write_text(json.dumps(data))
    return path


def test_marks_of_different_course_versions_are_not_mixed(tmp_path):
    a = read_marks(_marks(tmp_path / "a.json", {"01-demo": "aaaa"}))
    b = read_marks(_marks(tmp_path / "b.json", {"01-demo": "bbbb"}, paths=["b/01-demo.ipynb"]))
    with pytest.raises(MarksError, match=r"b\.json: chapter 01-demo was graded against other"):
        combine([a, b])
    again = read_marks(_marks(tmp_path / "c.json"))
    with pytest.raises(MarksError, match=r"c\.json: a/01-demo.ipynb is graded here and in"):
        combine([a, again])


def test_an_old_marks_file_without_versions_is_read_with_a_note(tmp_path):
    old = read_marks(_marks(tmp_path / "old.json", fmt=None, paths=["z/01-demo.ipynb"]))
    new = read_marks(_marks(tmp_path / "new.json"))
    submissions, versions, notes = combine([old, new])
    assert len(submissions) == 2 and versions == {"01-demo": "aaaa"}
    assert (
        len(notes) == 1 and "old.json was written before marks carried course versions" in notes[0]
    )


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (None, "no such marks file"),
        ("", "cut short"),
        ('{"format": 2, "submissions": [{"path": "a", "graded": true, "exer', "cut short"),
        ('{"format": 2, "submissions": [}', "not valid JSON"),
        ('{"cells": []}', "not a marks file"),
        ('{"format": 9, "submissions": []}', "marks format 9"),
        ('{"submissions": [{"path": "a"}]}', "submission 1 is not a grading result"),
    ],
)
def test_a_bad_marks_file_is_one_line_naming_it(tmp_path, capsys, content, words):
    path = tmp_path / "marks.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(MarksError, match=words) as error:
        read_marks(path)
    assert str(error.value).startswith(str(path)) and "\n" not in str(error.value)
    assert main(["report", str(path), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and "Traceback" not in err


def test_merge_never_overwrites_without_force(tmp_path, capsys):
    inputs = ["a.ipynb"]
    doc = marks_document(
        [GradeResult(path="a.ipynb", error="x")], _NoCourse(), shard=(1, 1), inputs=inputs
    )
    (tmp_path / "s.json").write_text(json.dumps(doc))
    out = tmp_path / "merged.json"
    out.write_text("keep me")
    assert main(["merge", str(tmp_path / "s.json"), "--out", str(out)]) == 2
    assert "exists; pass --force" in capsys.readouterr().err and out.read_text() == "keep me"
    assert main(["merge", str(tmp_path / "s.json"), "--out", str(out), "--force"]) == 0
    assert json.loads(out.read_text())["submissions"][0]["path"] == "a.ipynb"


def test_the_learner_is_nbgraders_student_folder_or_the_notebooks_folder():
    assert learner_of("course/submitted/ada/04-x/04-x.ipynb", "04-x") == "ada"
    assert learner_of("class/bob/04-x.ipynb", "04-x") == "bob"


def test_hints_taken_come_from_a_progress_record_beside_the_notebook(tmp_path):
    folder = tmp_path / "ada"
    folder.mkdir()
    (folder / "progress.json").write_text(
        json.dumps(
            {"format": 1, "chapters": {"01-demo": {"add": {"best": 2, "checks": 4, "hints": 2}}}}
        )
    )
    results = [
        GradeResult(path=str(folder / "01-demo.ipynb"), chapter="01-demo"),
        GradeResult(path=str(tmp_path / "bob" / "01-demo.ipynb"), chapter="01-demo"),
    ]
    doc = marks_document(results, _NoCourse())
    assert doc["submissions"][0]["progress"] == {"add": {"hints": 2, "checks": 4}}
    assert "progress" not in doc["submissions"][1]
