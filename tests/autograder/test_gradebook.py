"""Marks where instructors keep them (autograder/gradebook.py and ``autograder export``): a CSV
table in the course's order, and nbgrader's gradebook read back through nbgrader's own API."""

from __future__ import annotations

import csv
import json

import pytest

from autograder.__main__ import main
from autograder.gradebook import export_gradebook, marks_table

FEEDBACK = "AssertionError: mean() differs from the reference (got 0.0, expected 2.5)"


def _result(learner, add, mean, scale, *, flags=(), chapter="01-demo"):
    def exercise(gid, points, top):
        passed = points == top
        return {
            "grade_id": gid,
            "name": gid[5:],
            "points": points,
            "max_points": top,
            "status": "passed" if passed else "failed",
            "feedback": "passed" if passed else FEEDBACK,
        }

    # the results list the exercises in another order than the course, on purpose
    exercises = [exercise("ch01_scale", scale, 1), exercise("ch01_add", add, 2)]
    exercises.append(exercise("ch01_mean", mean, 3))
    return {
        "path": f"submitted/{learner}/{chapter}/{chapter}.ipynb",
        "chapter": chapter,
        "graded": True,
        "error": None,
        "points": add + mean + scale,
        "max_points": 6,
        "exercises": exercises,
        "flags": list(flags),
        "learner": learner,
    }


CLASS = [
    _result("cy", 2, 0, 1),
    _result("ada", 2, 3, 1),
    _result("bob", 0, 0, 0, flags=["ctypes: import ctypes"]),
]


def test_the_csv_has_a_row_per_learner_and_the_exercises_in_course_order(demo):
    course, _, _ = demo
    rows = marks_table(CLASS, course)
    assert rows[0] == [
        "learner",
        "ch01_add",
        "ch01_mean",
        "ch01_scale",
        "01-demo total",
        "not graded",
    ]
    assert rows[1:] == [
        ["ada", "2", "3", "1", "6", ""],
        ["bob", "0", "0", "0", "0", ""],
        ["cy", "2", "0", "1", "3", ""],
    ]


def test_a_learner_graded_twice_for_one_chapter_is_refused(demo):
    course, _, _ = demo
    twice = [*CLASS, {**_result("ada", 0, 0, 0), "path": "again/ada/01-demo/01-demo.ipynb"}]
    with pytest.raises(ValueError, match="learner 'ada' has two submissions of 01-demo"):
        marks_table(twice, course)


def test_the_gradebook_holds_the_marks_and_feedback_as_nbgrader_autograde_leaves_them(
    demo, tmp_path
):
    from nbgrader.api import Gradebook

    course, _, _ = demo
    db = tmp_path / "gradebook.db"
    lines = export_gradebook(CLASS, course, db)
    assert len(lines) == 3
    with Gradebook(f"sqlite:///{db}") as gb:
        assignment = gb.find_assignment("01-demo")
        assert assignment.max_score == 6
        cells = gb.find_notebook("01-demo", "01-demo").grade_cells
        assert {c.name for c in cells} == {"ch01_add_tests", "ch01_mean_tests", "ch01_scale_tests"}
        assert sorted(s.id for s in gb.students) == ["ada", "bob", "cy"]
        scores = {s: gb.find_submission("01-demo", s).score for s in ("ada", "bob", "cy")}
        assert scores == {"ada": 6, "bob": 0, "cy": 3}
        mean = gb.find_grade("ch01_mean_tests", "01-demo", "01-demo", "cy")
        assert (mean.auto_score, mean.max_score, mean.needs_manual_grade) == (0, 3, False)
        comment = gb.find_comment("ch01_mean", "01-demo", "01-demo", "cy")
        assert comment.auto_comment == FEEDBACK
        assert gb.find_comment("ch01_add", "01-demo", "01-demo", "cy").auto_comment is None
        flagged = gb.find_submission("01-demo", "bob")
        assert (
            flagged.needs_manual_grade
            and not gb.find_submission("01-demo", "ada").needs_manual_grade
        )
        assert (
            "review: ctypes"
            in gb.find_comment("ch01_add", "01-demo", "01-demo", "bob").auto_comment
        )


def test_export_never_overwrites_without_force(demo, tmp_path, capsys):
    from nbgrader.api import Gradebook

    course, _, _ = demo
    marks = tmp_path / "marks.json"
    marks.write_text(json.dumps({"format": 2, "course_versions": {}, "submissions": CLASS}))
    base = ["export", str(marks), "--course", str(course.root)]
    table, db = tmp_path / "marks.csv", tmp_path / "gradebook.db"
    assert main([*base, "--csv", str(table), "--gradebook", str(db)]) == 0
    with open(table, encoding="utf-8") as handle:
        assert len(list(csv.reader(handle))) == 4
    assert main([*base, "--csv", str(table)]) == 2
    assert "--csv" in capsys.readouterr().err
    better = {
        **CLASS[2],
        "points": 6,
        "exercises": [
            {**e, "points": e["max_points"], "status": "passed", "feedback": "passed"}
            for e in CLASS[2]["exercises"]
        ],
    }
    marks.write_text(json.dumps({"format": 2, "course_versions": {}, "submissions": [better]}))
    assert main([*base, "--gradebook", str(db)]) == 1
    assert "bob already has a submission of 01-demo; pass --force" in capsys.readouterr().err
    with Gradebook(f"sqlite:///{db}") as gb:
        assert gb.find_submission("01-demo", "bob").score == 0
    assert main([*base, "--gradebook", str(db), "--force"]) == 0
    with Gradebook(f"sqlite:///{db}") as gb:
        assert gb.find_submission("01-demo", "bob").score == 6
        assert gb.find_submission("01-demo", "ada").score == 6
    assert main(["export", str(marks), "--course", str(course.root)]) == 2
