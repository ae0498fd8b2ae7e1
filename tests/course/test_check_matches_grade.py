"""Check gives every exercise the points grading gives it, on the submission corpus.

``autograder check`` runs only the cells one exercise needs (:mod:`autograder.grader.deps`
prunes the rest); grading runs the whole notebook. Each corpus file records what grading gives
each exercise (see :mod:`tests.course.corpus`), so for the files test_submissions.py grades, the
notebook is built whole (not trimmed: Check must prune it itself), and each exercise is checked
through one :class:`autograder.grader.check.Checker` per chapter (a kernel kept warm between
checks, as in the lab) and must earn exactly the recorded points, with no check that errors.

Which exercises: without COURSE_CORPUS (`make test`, CI), the last exercise of each chapter's
``_base.py`` (9 checks, a minute or two: CI's budget is the whole suite's); with COURSE_CORPUS
(``05``, ``03,05`` or ``all``; ``make corpus``), every exercise of every file of those chapters:
the proof that Check and grading agree on the whole corpus.
"""

from __future__ import annotations

import json

import pytest

from autograder.course import cell_grade_id, exercise_id, is_test_cell
from autograder.grader.check import Checker
from autograder.grader.grade import run_coroutine
from autograder.release import released_notebook

from .corpus import BASE, build
from .test_submissions import _ASKED, CHAPTERS, COURSE, _graded_files

pytestmark = pytest.mark.slow

def _files(chapter: str) -> list:
    """The corpus files checked: every file with COURSE_CORPUS, else the base alone."""
    return _graded_files(chapter) if _ASKED else _graded_files(chapter)[:1]


CASES = [(ch, s.name) for ch in CHAPTERS for s in _files(ch)]


def _exercises(source: dict, prefix: str) -> list[str]:
    """The chapter's exercises (grade_ids of their solution cells), in notebook order."""
    found = []
    for cell in source["cells"]:
        gid = cell_grade_id(cell)
        if gid and gid.startswith(prefix) and is_test_cell(cell) and exercise_id(gid) not in found:
            found.append(exercise_id(gid))
    return found


def _checked_ids(sub, everything: list[str]) -> list[str]:
    """What to check of one file: with COURSE_CORPUS set, every exercise of every file; in CI,
    the base's last exercise of each chapter, the one whose check depends on the most cells
    (9 checks: CI's 45 minutes hold the whole suite; every exercise of every file is
    ``make corpus``'s proof, and tests/autograder/test_check.py tests the machinery)."""
    if _ASKED:
        return everything
    return everything[-1:] if sub.name == BASE[: -len(".py")] else []


def _expected(sub, grade_id: str, max_points: float) -> float:
    block = sub.exercises.get(grade_id)
    if block is not None:
        return block.points
    return 0.0 if sub.base == "stub" else max_points


def _kept(path, grade_id: str, ahead: bool = True) -> tuple:
    """The steps a check of ``grade_id`` runs: with ``ahead``, the cells run ahead first, then
    the cells and tests it keeps. Raises what planning raises."""
    from autograder.course import read_json_notebook
    from autograder.grader.grade import _only, _plan, steps_ahead

    notebook = read_json_notebook(path)
    chapter = COURSE.chapter_of(notebook)
    also = len(steps_ahead(notebook, chapter)) if ahead else 0
    steps, tests, exercises, _ = _plan(chapter.read_source(), notebook, chapter)
    return tuple(_only(grade_id, steps, tests, exercises, chapter, also=also)[0])


def _kept_cells(path, grade_id: str) -> str:
    """The cells Check runs for ``grade_id`` (the labels grading gives them), for a message."""
    try:
        kept = _kept(path, grade_id, ahead=False)
    except Exception as exc:  # the message must still come out
        return f"(could not list them: {exc})"
    return ", ".join(step.label for step in kept)


def _what_runs(path, grade_id: str):
    """What a check of ``grade_id`` runs: the cells run ahead, the cells and tests it keeps (by
    their code). Two checks that run the same are the same check (None: not computable)."""
    try:
        return (grade_id, _kept(path, grade_id))
    except Exception:  # the check itself will say what is wrong
        return None


async def _check_chapter(chapter: str, items: list) -> list:
    """[(name, grade_id, CheckResult)] for the (name, path, grade_ids) of one chapter.

    A check that would run exactly the cells and tests of one already made (another file whose
    answer to that exercise, and every cell the exercise needs, are the same) takes that check's
    result: its verdict is a function of what runs. This keeps the whole corpus (about 1,750
    checks, 40 % of them distinct) within a session."""
    checker = Checker(COURSE, timeout=300)  # a hang limit, as in test_submissions
    out = []
    made: dict = {}
    try:
        for name, path, grade_ids in items:
            for grade_id in grade_ids:
                key = _what_runs(path, grade_id)
                if key is not None and key in made:
                    same, result = made[key]
                    out.append((name, grade_id, result))
                    print(
                        f"{chapter}/{name} {grade_id}: {result.points:g}/{result.max_points:g} "
                        f"{result.status} (runs what {same} ran)",
                        flush=True,
                    )
                    continue
                result = await checker.check({"notebook": str(path), "exercise": grade_id})
                out.append((name, grade_id, result))
                if key is not None:
                    made[key] = (name, result)
                # one line a check: seen with -s, and under a failing test's captured setup
                print(
                    f"{chapter}/{name} {grade_id}: {result.points:g}/{result.max_points:g} "
                    f"{result.status} ({result.ran} cells, {result.seconds:.1f} s)",
                    flush=True,
                )
    finally:
        await checker.close()
    return out


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    """{chapter: {name: (Submission, path, [(grade_id, CheckResult)])}}, checked chapter by
    chapter in one event loop."""
    folder = tmp_path_factory.mktemp("check")
    table: dict = {}
    plans: dict = {}
    for chapter in CHAPTERS:
        found = COURSE.chapter(chapter)
        released = json.loads(released_notebook(COURSE, found))
        everything = _exercises(found.read_source(), found.prefix)
        subs = _files(chapter)
        base = subs[0]
        assert base.path.name == BASE, f"chapter {chapter}'s corpus has no {BASE}"
        items = []
        for sub in subs:
            path = folder / f"{chapter}-{sub.name}.ipynb"
            path.write_text(json.dumps(build(released, sub, base), indent=1), encoding="utf-8")
            items.append((sub.name, path, _checked_ids(sub, everything)))
            table.setdefault(chapter, {})[sub.name] = (sub, path, [])
        plans[chapter] = items

    async def run_all():
        for chapter, items in plans.items():
            for name, grade_id, result in await _check_chapter(chapter, items):
                table[chapter][name][2].append((grade_id, result))

    run_coroutine(run_all())
    return table


@pytest.mark.parametrize(("chapter", "name"), CASES, ids=[f"{c}/{n}" for c, n in CASES])
def test_check_gives_the_points_grading_gives(checked, chapter, name):
    sub, path, results = checked[chapter][name]
    wrong = []
    for grade_id, result in results:
        expected = _expected(sub, grade_id, result.max_points)
        if result.status == "error" or result.points != expected:
            wrong.append(
                f"{grade_id}: Check gave {result.points} of {result.max_points} "
                f"(status {result.status}), grading gives {expected}\n"
                f"{result.text(hints_shown=0)}\n"
                f"  cells Check ran: {_kept_cells(path, grade_id)}"
            )
    assert not wrong, f"{chapter}/{name} ({len(results)} checked):\n" + "\n\n".join(wrong)
