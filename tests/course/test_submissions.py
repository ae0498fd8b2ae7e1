"""Every chapter's submission corpus, graded by the real grader (see :mod:`tests.course.corpus`).

Alternative correct answers must earn full marks, each typical mistake must lose exactly its
exercise with feedback naming it, and shortcuts and tampering must earn nothing and be listed
under review. One batch per chapter (module fixture), graded in parallel; one test per file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from autograder.course import Course
from autograder.pool import grade_paths
from autograder.release import released_notebook

from .corpus import BASE, ROOT, build, submissions, trim

REPO = Path(__file__).resolve().parents[2]
COURSE = Course(REPO / "course")
CHAPTERS = sorted(p.name for p in ROOT.iterdir() if p.is_dir()) if ROOT.is_dir() else []
# COURSE_CORPUS=05 (or 03,05) grades only those chapters' corpora, while writing one.
if os.environ.get("COURSE_CORPUS"):
    CHAPTERS = [c for c in CHAPTERS if c in os.environ["COURSE_CORPUS"].split(",")]
CASES = [(ch, s.name) for ch in CHAPTERS for s in submissions(ch)]


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """{chapter: {name: (Submission, GradeResult)}} for every corpus file, graded in one batch."""
    folder = tmp_path_factory.mktemp("corpus")
    items, paths = [], []
    for chapter in CHAPTERS:
        found = COURSE.chapter(chapter)
        released = json.loads(released_notebook(COURSE, found))
        source = found.read_source()
        subs = submissions(chapter)
        base = subs[0]
        assert base.path.name == BASE, f"chapter {chapter}'s corpus has no {BASE}"
        for sub in subs:
            path = folder / f"{chapter}-{sub.name}.ipynb"
            notebook = trim(build(released, sub, base), source)
            path.write_text(json.dumps(notebook, indent=1), encoding="utf-8")
            items.append((chapter, sub))
            paths.append(path)
    # a hang limit, not a budget: chapter 9 trains and exports in its hidden tests, beside
    # the other pytest worker on 2 cores
    results = grade_paths(paths, COURSE, jobs=2, timeout=300)
    table: dict = {}
    for (chapter, sub), result in zip(items, results, strict=True):
        table.setdefault(chapter, {})[sub.name] = (sub, result)
    return table


@pytest.mark.parametrize(("chapter", "name"), CASES, ids=[f"{c}/{n}" for c, n in CASES])
def test_submission_scores_as_its_corpus_file_says(graded, chapter, name):
    sub, result = graded[chapter][name]
    assert result.graded, result.error
    listed = sub.exercises
    for exercise in result.exercises:
        block = listed.get(exercise.grade_id)
        if block is not None:
            points, word = block.points, block.feedback
        elif sub.base == "stub":
            points, word = 0.0, "NotImplementedError"
        else:
            points, word = exercise.max_points, "passed"
        assert exercise.points == points, f"{exercise.name}: {exercise.points} points\n{result}"
        assert word in exercise.feedback, f"{exercise.name}: no {word!r} in the feedback\n{result}"
    unknown = set(listed) - {e.grade_id for e in result.exercises}
    assert not unknown, f"the corpus file answers exercises the chapter lacks: {unknown}"
    for words in sub.review:
        assert any(words in flag for flag in result.flags), (
            f"no review flag with {words!r}\n{result}"
        )
    if not sub.review:
        assert result.flags == [], f"an honest submission was flagged for review\n{result}"


def test_every_exercise_has_two_alternatives_and_mistakes():
    for chapter in CHAPTERS:
        subs = submissions(chapter)
        chapter_ids = {s for sub in subs for s in sub.exercises}
        for grade_id in chapter_ids:
            full = [s for s in subs if grade_id in s.exercises and s.exercises[grade_id].points > 0]
            wrong = [
                s for s in subs if grade_id in s.exercises and s.exercises[grade_id].points == 0
            ]
            assert len(full) >= 3, f"{grade_id}: base plus at least two alternative answers"
            assert len(wrong) >= 2, f"{grade_id}: at least two typical mistakes"
