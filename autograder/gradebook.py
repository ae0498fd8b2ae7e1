"""Marks where instructors keep them: a CSV table, and nbgrader's gradebook.

:func:`marks_table` is one row per learner and one column per exercise, chapters and exercises
in the course's order, plus each chapter's total; :func:`write_csv` writes it. A learner with no
result for a chapter has empty cells there; a submission that failed to grade has 0 in each of
its exercises and its reason in the ``not graded`` column.

:func:`export_gradebook` puts ``autograder grade``'s marks into nbgrader's ``gradebook.db``
through nbgrader's own API, as ``nbgrader generate_assignment`` and ``nbgrader autograde`` would
have left them: per chapter an assignment and its notebook with the grade cells (each test cell,
with its points), solution cells and source cells of the course's source notebook; per learner a
student and a submission whose grades carry ``auto_score`` (the points) and whose comments carry
``auto_comment`` (the feedback line of an exercise that did not pass). A submission with review
flags, or that failed to grade, is marked ``needs_manual_grade`` so formgrader lists it for a
person; the flags go into the first exercise's comment. nbgrader's formgrader then shows the marks
and feedback for manual review; it shows the notebook itself from ``autograded/<student>/
<assignment>/``, where ``copy_to`` puts a copy of each submission.
"""

from __future__ import annotations

import csv
import os
import shutil
import sys
import warnings
from collections import defaultdict
from pathlib import Path

from autograder.course import (
    Course,
    CourseError,
    cell_grade_id,
    cell_points,
    cell_source,
    exercise_id,
    is_locked_cell,
    is_solution_cell,
    is_test_cell,
)

__all__ = ["export_gradebook", "marks_table", "write_csv"]


def _exercise_order(course: Course | None, submissions: list[dict]) -> dict[str, list[dict]]:
    """chapter -> its exercises [{grade_id, name, test, max_points}] in the course's order."""
    chapters: dict[str, list[dict]] = {}
    for name in sorted({s["chapter"] for s in submissions if s.get("chapter")}):
        exercises = None
        if course is not None:
            try:
                source = Course(course.root).chapter(name).read_source()
                exercises = [
                    {
                        "grade_id": exercise_id(cell_grade_id(c)),
                        "test": cell_grade_id(c),
                        "max_points": cell_points(c),
                    }
                    for c in source["cells"]
                    if is_test_cell(c)
                ]
            except CourseError:
                exercises = None
        if exercises is None:  # no course at hand: the order of the first result that has it
            seen: dict[str, dict] = {}
            for s in submissions:
                if s.get("chapter") == name:
                    for e in s["exercises"]:
                        seen.setdefault(
                            e["grade_id"],
                            {
                                "grade_id": e["grade_id"],
                                "test": e["grade_id"] + "_tests",
                                "max_points": e["max_points"],
                            },
                        )
            exercises = list(seen.values())
        chapters[name] = exercises
    return chapters


def marks_table(submissions: list[dict], course: Course | None = None) -> list[list[str]]:
    """The marks as rows: a header, then one row per learner (sorted by learner).

    Args:
        submissions: result dicts (see :func:`autograder.marks.combine`).
        course: the course, for the order of the exercises (else the results' order).

    Raises:
        CourseError: two submissions of one chapter by the same learner, naming both.
    """
    order = _exercise_order(course, submissions)
    header = ["learner"]
    for chapter, exercises in order.items():
        header += [e["grade_id"] for e in exercises] + [f"{chapter} total"]
    header.append("not graded")
    rows: dict[str, dict[str, str]] = defaultdict(dict)
    owner: dict[tuple[str, str], str] = {}
    for s in submissions:
        learner = s.get("learner") or Path(s["path"]).parent.name
        chapter = s.get("chapter")
        if chapter is None:
            rows[learner]["not graded"] = f"{Path(s['path']).name}: {s['error']}"
            continue
        key = (learner, chapter)
        if key in owner:
            raise CourseError(
                f"learner {learner!r} has two submissions of {chapter}: {owner[key]} and "
                f"{s['path']}; give one of them"
            )
        owner[key] = s["path"]
        points = {e["grade_id"]: e["points"] for e in s["exercises"]}
        for e in order[chapter]:
            rows[learner][e["grade_id"]] = f"{points.get(e['grade_id'], 0):g}"
        rows[learner][f"{chapter} total"] = f"{s['points']:g}"
        if not s["graded"]:
            rows[learner]["not graded"] = f"{chapter}: {s['error']}"
    return [header] + [
        [learner] + [rows[learner].get(h, "") for h in header[1:]] for learner in sorted(rows)
    ]


def write_csv(rows: list[list[str]], path: Path) -> None:
    """Write :func:`marks_table` rows as a CSV file (UTF-8, a header row)."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)


def export_gradebook(
    submissions: list[dict],
    course: Course,
    db: Path,
    *,
    force: bool = False,
    copy_to: Path | None = None,
    roots: list[Path] = (),
) -> list[str]:
    """Put the marks into nbgrader's gradebook at ``db`` (created when missing).

    Args:
        submissions: result dicts (see :func:`autograder.marks.combine`).
        course: the course whose source notebooks define the assignments' cells.
        db: the ``gradebook.db`` file.
        force: replace a learner's existing submission of a chapter (else refuse).
        copy_to: nbgrader's ``autograded/`` folder: each submission is copied to
            ``copy_to/<student>/<chapter>/<chapter>.ipynb`` for formgrader to show.
        roots: folders to find relative submission paths in, after the current one.

    Returns:
        One line per learner and chapter written.

    Raises:
        CourseError: a submission already in the gradebook (without ``force``), or a copy that
            would overwrite a file (without ``force``), in one line naming it.
    """
    from nbgrader.api import Gradebook, MissingEntry

    order = _exercise_order(course, submissions)
    written = []
    bin_dir = str(Path(sys.executable).parent)
    if shutil.which("alembic") is None and bin_dir not in os.environ.get("PATH", ""):
        # nbgrader runs `alembic` to set up a new database; it sits beside this interpreter
        os.environ["PATH"] = os.pathsep.join([bin_dir, os.environ.get("PATH", "")])
    with warnings.catch_warnings(), Gradebook(f"sqlite:///{Path(db).resolve()}") as gb:
        # nbgrader's add_submission trips SQLAlchemy's autoflush warnings; they are its own
        warnings.simplefilter("ignore", category=Warning)
        for s in submissions:  # refuse before anything is written
            if s.get("chapter") is None or force:
                continue
            student = s.get("learner") or Path(s["path"]).parent.name
            try:
                gb.find_submission(s["chapter"], student)
            except MissingEntry:
                continue
            raise CourseError(
                f"{db}: {student} already has a submission of {s['chapter']}; pass --force to "
                "replace it"
            )
        for chapter in order:
            gb.update_or_create_assignment(chapter)
            gb.update_or_create_notebook(chapter, chapter)
            source = Course(course.root).chapter(chapter).read_source()
            for cell in source["cells"]:
                gid = cell_grade_id(cell)
                if gid is None:
                    continue
                if is_test_cell(cell):
                    gb.update_or_create_grade_cell(
                        gid, chapter, chapter, max_score=cell_points(cell), cell_type="code"
                    )
                if is_solution_cell(cell):
                    gb.update_or_create_solution_cell(gid, chapter, chapter)
                gb.update_or_create_source_cell(
                    gid,
                    chapter,
                    chapter,
                    cell_type=cell.get("cell_type", "code"),
                    locked=is_locked_cell(cell),
                    source=cell_source(cell),
                    checksum=cell.get("metadata", {}).get("nbgrader", {}).get("checksum"),
                )
        for s in submissions:
            chapter = s.get("chapter")
            if chapter is None:
                continue
            student = s.get("learner") or Path(s["path"]).parent.name
            gb.update_or_create_student(student)
            try:
                gb.find_submission(chapter, student)
                gb.remove_submission(chapter, student)
            except MissingEntry:
                pass
            gb.add_submission(chapter, student)
            points = {e["grade_id"]: e for e in s["exercises"]}
            review = bool(s.get("flags")) or not s["graded"]
            flags = "; ".join(f"review: {f}" for f in s.get("flags", []))
            for index, exercise in enumerate(order[chapter]):
                got = points.get(exercise["grade_id"])
                grade = gb.find_grade(exercise["test"], chapter, chapter, student)
                grade.auto_score = float(got["points"]) if got else 0.0
                grade.needs_manual_grade = review
                comment = gb.find_comment(exercise["grade_id"], chapter, chapter, student)
                text = [] if got is None or got["status"] == "passed" else [got["feedback"]]
                if not s["graded"] and index == 0:
                    text.append(f"not graded: {s['error']}")
                if flags and index == 0:
                    text.append(flags)
                comment.auto_comment = "\n".join(text) or None
            gb.db.commit()
            if copy_to is not None:
                _copy(s, Path(copy_to) / student / chapter / f"{chapter}.ipynb", force, roots)
            written.append(f"{student} {chapter}: {s['points']:g} / {s['max_points']:g}")
    return written


def _copy(submission: dict, target: Path, force: bool, roots) -> None:
    from autograder.report import _resolve

    found = _resolve(submission["path"], list(roots))
    if found is None:
        return
    if target.exists() and not force:
        raise CourseError(f"{target} exists; pass --force to replace it")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(found, target)
