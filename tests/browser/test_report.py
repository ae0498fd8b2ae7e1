"""The class report (``autograder report``) in Chromium, opened from disk as an instructor would:
its plots load as pictures, the review links reach the learners' feedback pages, nothing is
fetched from elsewhere."""

from __future__ import annotations

import json

import pytest

from autograder.__main__ import main
from tests.autograder.test_report import COPY, LONG, PASSED, _entry, _notebook

pytestmark = pytest.mark.requires_browser


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    root = tmp_path_factory.mktemp("class-report")
    mode = "the model was left in eval mode (got 0.3, expected 0.1)"
    submissions = [
        _entry("ada", PASSED, (2.0, "passed")),
        _entry("bob", (0.0, mode), (0.0, mode), flags=["ctypes: import ctypes"], feedback=True),
        _entry("cy", PASSED, (1.0, mode)),
    ]
    for entry, code in zip(submissions, (LONG, COPY, LONG.replace("count", "n")), strict=True):
        entry["path"] = str(root / entry["path"])
        _notebook(root / "class" / entry["learner"] / "04-training-loop.ipynb", code)
    feedback = root / "feedback" / "bob"
    feedback.mkdir(parents=True)
    (feedback / "04-training-loop.html").write_text(
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>Feedback</title></head>"
        "<body><h1>Feedback</h1></body></html>"
    )
    marks = root / "marks.json"
    marks.write_text(
        json.dumps(
            {
                "format": 2,
                "course_versions": {"04-training-loop": "abc"},
                "feedback_dir": str(root / "feedback"),
                "submissions": submissions,
            }
        )
    )
    assert main(["report", str(marks), "--out", str(root / "report")]) == 0
    return root / "report" / "index.html"


def test_the_report_opens_offline_with_its_plots_and_feedback_links(browser, report, artifacts):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    problems = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda err: problems.append(str(err)))
    page.on(
        "request",
        lambda r: None if r.url.startswith("file://") else problems.append(f"offsite: {r.url}"),
    )
    try:
        page.goto(report.as_uri(), wait_until="load")
        assert page.title() == "Class report"
        images = page.evaluate(
            "Array.from(document.images).map(i => [i.getAttribute('src'), "
            "i.complete && i.naturalWidth > 200])"
        )
        assert images == [["plots/04-training-loop.png", True]], images
        text = page.inner_text("body")
        assert "the model was left in eval mode" in text and "ctypes" in text
        assert page.locator(".pair pre").count() >= 2  # the two snippets, side by side
        page.screenshot(path=str(artifacts / "class-report.png"), full_page=True)
        page.click("#review ~ table a")
        page.wait_for_load_state("load")
        assert page.url.endswith("/feedback/bob/04-training-loop.html")
        assert page.inner_text("h1") == "Feedback"
        assert problems == []
    finally:
        context.close()
