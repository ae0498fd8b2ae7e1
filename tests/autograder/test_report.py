"""The class report (autograder/report.py and ``autograder report``) on a small synthetic class."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autograder.__main__ import main
from autograder.report import build_report, check_key, write_report

LONG = """\
def train_one_epoch(model, loader, optimizer, loss_fn, device):
    model.train()
    total, count = 0.0, 0
    for inputs, targets in loader:
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(targets)
        count += len(targets)
    return total / count
"""
OTHER = """\
def train_one_epoch(model, loader, optimizer, loss_fn, device):
    model.train()
    losses = []
    for batch in loader:
        x, y = (t.to(device) for t in batch)
        out = model(x)
        loss = loss_fn(out, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(float(loss) * y.shape[0])
    return sum(losses) / len(loader.dataset)
"""
COPY = """\
def train_one_epoch(net, data, opt, crit, dev):
    # my own loop
    net.train()
    seen, running = 0, 0.0
    for xb, yb in data:
        xb, yb = xb.to(dev), yb.to(dev)
        opt.zero_grad()
        l = crit(net(xb), yb)  # the loss
        l.backward()
        opt.step()
        seen += len(yb)
        running += l.item() * len(yb)
    return running / seen
"""


def _notebook(path: Path, code: str) -> None:
    meta = {"nbgrader": {"solution": True, "grade": False, "grade_id": "ch04_train_one_epoch"}}
    cell = {"cell_type": "code", "metadata": meta, "source": code, "outputs": []}
    cell["execution_count"] = None
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [cell]}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(nb), encoding="utf-8")


def _entry(learner, train, evaluate, *, flags=(), progress=None, feedback=None):
    exercises = [
        {
            "grade_id": "ch04_train_one_epoch",
            "name": "train_one_epoch",
            "points": train[0],
            "max_points": 3.0,
            "status": "passed" if train[0] == 3 else "failed",
            "feedback": train[1],
        },
        {
            "grade_id": "ch04_evaluate",
            "name": "evaluate",
            "points": evaluate[0],
            "max_points": 2.0,
            "status": "passed" if evaluate[0] == 2 else "failed",
            "feedback": evaluate[1],
        },
    ]
    entry = {
        "path": f"class/{learner}/04-training-loop.ipynb",
        "chapter": "04-training-loop",
        "graded": True,
        "error": None,
        "points": train[0] + evaluate[0],
        "max_points": 5.0,
        "exercises": exercises,
        "flags": list(flags),
        "learner": learner,
    }
    if progress is not None:
        entry["progress"] = progress
    if feedback:
        entry["feedback"] = f"{learner}/04-training-loop.html"
    return entry


PASSED = (3.0, "passed")
E_PASSED = (2.0, "passed")


@pytest.fixture
def klass(tmp_path, monkeypatch):
    """Five learners: two copy each other, one failed to grade, one is flagged."""
    monkeypatch.chdir(tmp_path)
    zero = (
        "AssertionError: loss differs after 2 steps: is zero_grad called? (got 0.52, expected 0.31)"
    )
    zero_b = (
        "AssertionError: loss differs after 2 steps: is zero_grad called? (got 1.5, expected 0.7)"
    )
    mode = "the model was left in eval mode for key 'fc.weight' of shape (4, 3)"
    submissions = [
        _entry("ada", PASSED, E_PASSED, progress={"train_one_epoch": {"hints": 0, "checks": 1}}),
        _entry(
            "bob", (0.0, zero), (0.0, mode), progress={"train_one_epoch": {"hints": 2, "checks": 5}}
        ),
        _entry(
            "cy",
            (0.0, f"{zero_b} | {mode}"),
            E_PASSED,
            flags=["the grader's internals: import autograder.grader"],
            feedback=True,
        ),
        _entry("dee", PASSED, (0.0, "evaluate must return a dict")),
        {
            "path": "class/eve/04-training-loop.ipynb",
            "chapter": None,
            "graded": False,
            "error": "class/eve/04-training-loop.ipynb: not valid notebook JSON",
            "points": 0,
            "max_points": 0,
            "exercises": [],
            "flags": [],
            "learner": "eve",
        },
    ]
    for learner, code in (
        ("ada", LONG),
        ("bob", OTHER),
        ("cy", COPY),
        ("dee", OTHER.replace("losses", "kept") + "\n# ok\n"),
    ):
        _notebook(tmp_path / "class" / learner / "04-training-loop.ipynb", code)
    feedback = tmp_path / "feedback"
    (feedback / "cy").mkdir(parents=True)
    (feedback / "cy" / "04-training-loop.html").write_text("<h1>Feedback</h1>")
    return submissions, feedback


def test_failing_checks_are_grouped_by_the_check_not_its_values():
    a = check_key("AssertionError: loss 0.52 != 0.31 for shape (4, 3) and key 'fc.weight'")
    b = check_key("loss 1.5e-3 != -2 for shape torch.Size([8, 3, 2]) and key 'head.bias'")
    assert a == b == "loss N != N for shape (…) and key '…'"
    assert check_key("evaluate must return a dict") == "evaluate must return a dict"
    assert check_key("got 3 learners") != check_key("got 3 batches")


def test_the_report_counts_points_checks_hints_reviews_and_failures(klass):
    submissions, feedback = klass
    report = build_report(
        submissions, versions={"04-training-loop": "abc"}, feedback_dir=str(feedback)
    )
    assert (report["submissions"], report["graded"]) == (5, 4)
    [chapter] = report["chapters"]
    assert chapter["distribution"] == {"0": 1, "2": 1, "3": 1, "5": 1}
    train, evaluate = chapter["exercises"]
    assert train["distribution"] == {"0": 2, "3": 2} and train["full_marks"] == 2
    # two learners fail one zero_grad check with different numbers: one line, 2 learners
    assert train["failing_checks"][0]["learners"] == 2
    assert "zero_grad" in train["failing_checks"][0]["check"]
    assert {c["check"]: c["learners"] for c in evaluate["failing_checks"]} == {
        "the model was left in eval mode for key '…' of shape (…)": 1,
        "evaluate must return a dict": 1,
    }
    assert train["hints"] == {"records": 2, "took": {"0": 1, "2": 1}, "mean_checks": 3.0}
    assert report["not_graded"] == [
        {
            "path": "class/eve/04-training-loop.ipynb",
            "learner": "eve",
            "error": submissions[4]["error"],
        }
    ]
    [review] = report["reviews"]
    assert review["learner"] == "cy" and "internals" in review["flag"]
    assert review["feedback"] == str(feedback / "cy" / "04-training-loop.html")


def test_the_report_pairs_the_copies_and_only_them(klass):
    submissions, _ = klass
    report = build_report(submissions)
    pairs = {(c["a"]["learner"], c["b"]["learner"]) for c in report["copies"]}
    assert pairs == {("ada", "cy"), ("bob", "dee")}
    ada_cy = next(c for c in report["copies"] if c["a"]["learner"] == "ada")
    assert ada_cy["code_a"] == LONG and ada_cy["code_b"] == COPY and ada_cy["score"] >= 0.9
    assert all(s["points"] == e["points"] for s, e in zip(submissions, submissions))  # no deduction
    assert build_report(submissions, similarity=False)["copies"] == []


def test_the_page_shows_plots_as_pictures_and_links_the_feedback(klass, tmp_path):
    submissions, feedback = klass
    report = build_report(submissions, feedback_dir=str(feedback))
    out = tmp_path / "report"
    write_report(report, out)
    page = (out / "index.html").read_text()
    png = out / "plots" / "04-training-loop.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<img src='plots/04-training-loop.png'" in page
    assert "<a href='../feedback/cy/04-training-loop.html'>cy</a>" in page
    assert "not valid notebook JSON" in page and "http" not in page.replace("https://", "")
    saved = json.loads((out / "report.json").read_text())
    assert saved["chapters"][0]["plot"] == "plots/04-training-loop.png"


def test_the_command_writes_the_report_and_never_overwrites_without_force(klass, tmp_path, capsys):
    submissions, feedback = klass
    marks = tmp_path / "marks.json"
    marks.write_text(
        json.dumps(
            {
                "format": 2,
                "course_versions": {"04-training-loop": "abc"},
                "feedback_dir": str(feedback),
                "submissions": submissions,
            }
        )
    )
    out = tmp_path / "out"
    assert main(["report", str(marks), "--out", str(out)]) == 0
    assert "2 similar pairs" in capsys.readouterr().out
    assert (out / "index.html").is_file() and (out / "report.json").is_file()
    before = (out / "index.html").read_text()
    (out / "index.html").write_text("mine")
    assert main(["report", str(marks), "--out", str(out)]) == 2
    assert "pass --force" in capsys.readouterr().err
    assert (out / "index.html").read_text() == "mine"
    assert main(["report", str(marks), "--out", str(out), "--force"]) == 0
    assert (out / "index.html").read_text() == before
    assert main(["report", str(marks), "--out", str(out), "--force", "--threshold", "2"]) == 2
