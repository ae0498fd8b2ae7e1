"""Every chapter's submission corpus, graded by the real grader (see :mod:`tests.course.corpus`).

Alternative correct answers must earn full marks, each typical mistake must lose exactly its
exercise with feedback naming it, and shortcuts and tampering must earn nothing and be listed
under review. One batch per chapter (module fixture), graded in parallel; one test per file.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from autograder.course import Course
from autograder.grader.pool import grade_paths
from autograder.release import released_notebook

from .corpus import BASE, ROOT, build, submissions, trim

REPO = Path(__file__).resolve().parents[2]
# COURSE_LANG=zh grades the corpus on the Chinese edition (course/translations/zh/): the same
# points and review flags, with the feedback in Chinese (see test_submission_scores_...).
LANGUAGE = os.environ.get("COURSE_LANG", "en")
COURSE = Course(REPO / "course", LANGUAGE)
_CJK = re.compile(r"[\u4e00-\u9fff]")
CHAPTERS = sorted(p.name for p in ROOT.iterdir() if p.is_dir()) if ROOT.is_dir() else []
# COURSE_CORPUS=05 (or 03,05) grades every file of those chapters' corpora, while writing one;
# COURSE_CORPUS=all (`make corpus`) every file of every chapter. Without it (`make test`, CI),
# each chapter's sample (see sample()): the whole corpus is about 350 gradings, 70 to 100
# minutes on 2 cores, more than CI's budget for the whole suite.
_ASKED = os.environ.get("COURSE_CORPUS", "")
if _ASKED and _ASKED != "all":
    CHAPTERS = [c for c in CHAPTERS if c in _ASKED.split(",")]
# With COURSE_CORPUS, COURSE_FILES=transcriber (or several words, comma-separated) keeps only the
# files whose names contain one of them, and each chapter's base: new files, proven alone.
_FILES = [w for w in os.environ.get("COURSE_FILES", "").split(",") if w]


def sample(subs: list) -> list:
    """What CI grades of a chapter's corpus: the base (correct answers, and no review flag on
    an honest notebook), each exercise's first mistake and first alternative answer (by file
    name, fewest files first: a file answering several exercises covers them all), a stub-based
    file, and the first shortcut and the first tampering file. The rest run in `make corpus`."""
    base, rest = subs[0], subs[1:]
    chosen = [base]
    ids = sorted({g for s in subs for g in s.exercises})
    plain = [s for s in rest if not s.review and s.base != "stub"]
    for full in (False, True):
        left = set(ids)
        while left:
            best = max(
                plain,
                key=lambda s: len(
                    {g for g, b in s.exercises.items() if (b.points > 0) == full} & left
                ),
            )
            covered = {g for g, b in best.exercises.items() if (b.points > 0) == full} & left
            if not covered:
                break
            left -= covered
            if best not in chosen:
                chosen.append(best)
    for kind in ("stub", "shortcut_", "tamper_"):
        found = [
            s
            for s in rest
            if (s.base == "stub" if kind == "stub" else s.name.startswith(kind) and s.review)
        ]
        if found and not any(f in chosen for f in found):
            chosen.append(found[0])
    return chosen


def _graded_files(chapter: str) -> list:
    subs = submissions(chapter)
    if _ASKED and _FILES:
        return [s for s in subs if s is subs[0] or any(w in s.name for w in _FILES)]
    return subs if _ASKED else sample(subs)


CASES = [(ch, s.name) for ch in CHAPTERS for s in _graded_files(ch)]


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """{chapter: {name: (Submission, GradeResult)}} for every corpus file, graded in one batch."""
    folder = tmp_path_factory.mktemp("corpus")
    items, paths = [], []
    for chapter in CHAPTERS:
        found = COURSE.chapter(chapter)
        released = json.loads(released_notebook(COURSE, found))
        source = found.read_source()
        subs = _graded_files(chapter)
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
        if LANGUAGE == "en":
            assert word in exercise.feedback, (
                f"{exercise.name}: no {word!r} in the feedback\n{result}"
            )
            if block is not None and block.unlike:
                assert block.unlike not in exercise.feedback, (
                    f"{exercise.name}: the feedback names {block.unlike!r}, not this mistake\n{result}"
                )
        elif points < exercise.max_points:  # the feedback names the mistake in the edition's words
            assert _CJK.search(exercise.feedback), (
                f"{exercise.name}: feedback not translated\n{result}"
            )
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


def test_the_sample_covers_every_exercise_both_ways():
    for chapter in CHAPTERS:
        subs = submissions(chapter)
        chosen = sample(subs)
        assert chosen[0].path.name == BASE and len(chosen) < len(subs) / 2
        for grade_id in {g for s in subs for g in s.exercises}:
            blocks = [s.exercises[grade_id] for s in chosen[1:] if grade_id in s.exercises]
            assert any(b.points == 0 for b in blocks), f"{grade_id}: no mistake in the sample"
            assert any(b.points > 0 for b in blocks), f"{grade_id}: no alternative in the sample"
        assert any(s.review for s in chosen), f"chapter {chapter}: no tampering in the sample"
