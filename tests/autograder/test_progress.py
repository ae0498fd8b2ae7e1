"""progress.json (autograder/progress.py): best points kept, hints counted, written safely."""

from __future__ import annotations

import threading

from autograder.progress import (
    course_exercises,
    load,
    progress_file,
    record_check,
    record_hint,
    summary_html,
    summary_text,
)
from autograder.verdict import CheckResult


def _result(points, name="add", chapter="01-demo", error=None):
    return CheckResult(
        notebook="x",
        exercise=f"ch01_{name}",
        name=name,
        chapter=chapter,
        points=points,
        max_points=2,
        status="passed" if points == 2 else "failed",
        error=error,
    )


def test_the_best_points_stay_and_every_check_and_hint_counts(tmp_path):
    notebook = tmp_path / "01-demo.ipynb"
    assert progress_file(notebook) == tmp_path / "progress.json"
    record_check(notebook, _result(2))
    record_check(notebook, _result(0))  # a later, worse check does not lower the best
    record_hint(notebook, "01-demo", "add", 1)
    record_hint(notebook, "01-demo", "add", 2)
    record_hint(notebook, "01-demo", "add", 1)
    entry = load(tmp_path / "progress.json")["chapters"]["01-demo"]["add"]
    assert (entry["best"], entry["last"], entry["checks"], entry["hints"]) == (2, 0, 2, 2)
    assert record_check(notebook, _result(0, error="no kernel")) is None  # not a verdict


def test_checks_at_once_lose_nothing(tmp_path):
    notebook = tmp_path / "01-demo.ipynb"
    threads = [
        threading.Thread(target=record_check, args=(notebook, _result(i % 3, name=f"e{i % 4}")))
        for i in range(24)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    chapters = load(tmp_path / "progress.json")["chapters"]["01-demo"]
    assert sum(e["checks"] for e in chapters.values()) == 24


def test_a_file_that_is_not_ours_is_kept_aside_never_merged(tmp_path):
    (tmp_path / "progress.json").write_text("{ not json")
    record_check(tmp_path / "01-demo.ipynb", _result(2))
    assert (tmp_path / "progress.json.broken").read_text() == "{ not json"
    assert load(tmp_path / "progress.json")["chapters"]["01-demo"]["add"]["best"] == 2


def test_the_summary_lists_every_exercise_of_the_course(tmp_path, demo):
    _, notebooks, _ = demo
    exercises = course_exercises(notebooks)
    assert exercises["01-demo"] == [("add", 2.0), ("mean", 3.0), ("scale", 1.0)]
    data = {"chapters": {"01-demo": {"add": {"best": 2, "max": 2, "checks": 1, "hints": 0}}}}
    text = summary_text(data, "en", exercises)
    assert "01-demo: 2 / 6" in text and "not checked yet" in text and "total: 2 / 7" in text
    html = summary_html(data, "zh", exercises)
    assert "你的进度" in html and "尚未检查" in html and html.count("progress-row") == 4
