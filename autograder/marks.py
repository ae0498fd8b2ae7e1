"""Marks files: what ``autograder grade --json-file`` writes, read back, checked, sharded, merged.

A marks file is JSON::

    {"format": 2,
     "course_versions": {"04-training-loop": "3f2a9c0e51b7"},
     "shard": {"k": 2, "n": 8, "inputs": "<sha256 of every input path, in order>",
               "paths": ["a.ipynb", "b.ipynb", ...]},          (only with --shard)
     "feedback_dir": "/abs/feedback",                           (only with --feedback)
     "submissions": [GradeResult.to_dict() + {"learner", "feedback", "progress"}, ...]}

``course_versions`` fingerprints, per chapter, what decides its marks: the grade_id, points and
full source (hidden tests included) of every test cell of the English source notebook, so marks
graded against different hidden tests are never mixed. A file written before versions existed
(no ``format``) is still read; its chapters count as "version unknown", which mixes with
anything (the reader is told once). ``learner`` is the folder that names the learner (nbgrader's
``submitted/<learner>/<chapter>/``, else the notebook's folder); ``progress`` holds the hints and
checks of the chapter from a ``progress.json`` found beside the notebook.

Shards: ``--shard K/N`` grades the inputs at positions ``K-1, K-1+N, K-1+2N, ...`` of the list a
single run would grade (files as given, folders expanded in sorted order). Every shard records
that list, so :func:`merge` can check that the N shards come from one command, that each is there
exactly once, and put the results back in a single run's order.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from autograder.course import Course, CourseError, cell_grade_id, cell_points, is_test_cell

__all__ = [
    "FORMAT",
    "Marks",
    "MarksError",
    "chapter_version",
    "combine",
    "learner_of",
    "marks_document",
    "merge",
    "parse_shard",
    "read_marks",
    "shard_of",
]

FORMAT = 2
_RESULT_KEYS = ("path", "graded", "exercises")


class MarksError(CourseError):
    """A marks file that cannot be used: one line naming the file, what is wrong, what to do."""


@dataclass
class Marks:
    """One marks file, read and checked.

    Attributes:
        path: where it was read from. submissions: the result dicts, in file order.
        versions: chapter name -> course version (empty for a file written before versions).
        shard: the shard record (``k``, ``n``, ``inputs``, ``paths``), or None for a whole run.
        feedback_dir: the folder its feedback pages were written to, if any.
    """

    path: Path
    submissions: list[dict]
    versions: dict[str, str] = field(default_factory=dict)
    shard: dict | None = None
    feedback_dir: str | None = None
    versioned: bool = True


def chapter_version(chapter) -> str:
    """A short hash of what decides a chapter's marks: its test cells' ids, points and source.

    Args:
        chapter: an :class:`autograder.course.Chapter` (any edition: the English source is read,
            since every edition shares its hidden tests).

    Returns:
        12 hex digits; it changes when a test, hidden test or points value of the chapter does.

    Example:
        >>> chapter_version(Course(default_course_root()).chapter("04"))  # doctest: +SKIP
        '3f2a9c0e51b7'
    """
    from autograder.course import read_json_notebook

    digest = hashlib.sha256(chapter.name.encode())
    for cell in read_json_notebook(chapter.source).get("cells", []):
        if is_test_cell(cell):
            source = cell.get("source", "")
            source = "".join(source) if isinstance(source, list) else source
            part = f"\0{cell_grade_id(cell)}\0{cell_points(cell):g}\0{source}"
            digest.update(part.encode())
    return digest.hexdigest()[:12]


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` -> (K, N), with 1 <= K <= N.

    Raises:
        ValueError: naming what was received and what is expected.
    """
    k, slash, n = text.partition("/")
    try:
        k_value, n_value = int(k), int(n)
    except ValueError:
        k_value = n_value = 0
    if not slash or not 1 <= k_value <= n_value:
        raise ValueError(
            f"--shard must be K/N with whole numbers 1 <= K <= N (e.g. 3/8), got {text!r}"
        )
    return k_value, n_value


def shard_of(paths: list[str], k: int, n: int) -> list[str]:
    """The inputs shard K of N grades: positions K-1, K-1+N, ... of ``paths`` (as given)."""
    return [p for index, p in enumerate(paths) if index % n == k - 1]


def _inputs_hash(paths: list[str]) -> str:
    return hashlib.sha256("\0".join(paths).encode()).hexdigest()


def learner_of(path: str, chapter: str | None) -> str:
    """The learner a submission belongs to: nbgrader's ``submitted/<learner>/<chapter>/x.ipynb``
    gives ``<learner>`` (a folder named like a chapter, NN-name, counts as one even when the
    notebook could not be read); otherwise the notebook's folder (``class/ada/04-x.ipynb`` ->
    ``ada``)."""
    parent = Path(path).parent
    in_chapter_folder = parent.name == chapter or re.match(r"\d\d-[a-z0-9-]+$", parent.name)
    if in_chapter_folder and parent.parent.name:
        return parent.parent.name
    return parent.name or Path(path).stem


def _progress_of(path: str, chapter: str | None) -> dict | None:
    """The hints and checks of ``chapter`` in a progress.json beside the notebook, if any."""
    from autograder.progress import FILE_NAME, load

    record = Path(path).parent / FILE_NAME
    if chapter is None or not record.is_file():
        return None
    exercises = load(record).get("chapters", {}).get(chapter, {})
    return {
        name: {"hints": int(entry.get("hints", 0)), "checks": int(entry.get("checks", 0))}
        for name, entry in exercises.items()
        if isinstance(entry, dict)
    }


def marks_document(
    results,
    course: Course,
    *,
    shard: tuple[int, int] | None = None,
    inputs: list[str] | None = None,
    feedback_dir: Path | None = None,
    feedback_names: dict[str, str] | None = None,
) -> dict:
    """The marks file's content for ``results`` (a list of GradeResult).

    Args:
        results: what :func:`autograder.grader.pool.grade_paths` returned.
        course: the course graded against (for the chapters' versions).
        shard: (K, N) when this run graded one shard of ``inputs``.
        inputs: every input path of the whole run, in order (required with ``shard``).
        feedback_dir: where the feedback pages went. feedback_names: path -> page, relative to it.
    """
    versions = {}
    for name in sorted({r.chapter for r in results if r.chapter}):
        try:
            versions[name] = chapter_version(course.chapter(name))
        except CourseError:
            pass
    submissions = []
    for result in results:
        data = result.to_dict()
        data["learner"] = learner_of(result.path, result.chapter)
        if feedback_names and result.path in feedback_names:
            data["feedback"] = feedback_names[result.path]
        progress = _progress_of(result.path, result.chapter)
        if progress is not None:
            data["progress"] = progress
        submissions.append(data)
    document: dict = {"format": FORMAT, "course_versions": versions}
    if shard is not None:
        k, n = shard
        document["shard"] = {"k": k, "n": n, "inputs": _inputs_hash(inputs), "paths": inputs}
    if feedback_dir is not None:
        document["feedback_dir"] = str(Path(feedback_dir).resolve())
    document["submissions"] = submissions
    return document


def read_marks(path: str | os.PathLike) -> Marks:
    """Read and check one marks file.

    Raises:
        MarksError: a missing, unreadable, cut-short or foreign file, in one line naming it.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MarksError(f"{path}: no such marks file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise MarksError(f"{path}: cannot be read as a marks file ({exc})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        cut = not text.rstrip().endswith("}")  # what grade writes always ends so
        why = (
            f"it ends early (line {exc.lineno}): the file was cut short; write it again"
            if cut
            else f"it is not valid JSON (line {exc.lineno}: {exc.msg})"
        )
        raise MarksError(
            f"{path}: {why}; expected what `autograder grade --json-file` writes"
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("submissions"), list):
        raise MarksError(
            f"{path}: not a marks file (no 'submissions' list); expected what "
            "`autograder grade --json-file` writes"
        )
    fmt = data.get("format")
    if fmt is not None and fmt != FORMAT:
        raise MarksError(f"{path}: marks format {fmt!r}, this autograder reads {FORMAT}")
    for index, entry in enumerate(data["submissions"]):
        if not isinstance(entry, dict) or any(key not in entry for key in _RESULT_KEYS):
            raise MarksError(
                f"{path}: submission {index + 1} is not a grading result (it needs "
                f"{', '.join(_RESULT_KEYS)})"
            )
    shard = data.get("shard")
    if shard is not None and not (
        isinstance(shard, dict)
        and isinstance(shard.get("paths"), list)
        and all(isinstance(shard.get(key), int) for key in ("k", "n"))
    ):
        raise MarksError(f"{path}: its 'shard' record is damaged (expected k, n and paths)")
    return Marks(
        path=path,
        submissions=data["submissions"],
        versions=dict(data.get("course_versions") or {}),
        shard=shard,
        feedback_dir=data.get("feedback_dir"),
        versioned=fmt is not None,
    )


def combine(files: list[Marks]) -> tuple[list[dict], dict[str, str], list[str]]:
    """The submissions of several marks files, checked to belong to one course version.

    Returns:
        (submissions in file order, chapter -> version, notes for the reader).

    Raises:
        MarksError: two files grading one chapter against different hidden tests, or one
            notebook graded in two files, naming both files.
    """
    versions: dict[str, tuple[str, Path]] = {}
    seen: dict[str, Path] = {}
    submissions, notes = [], []
    for marks in files:
        if not marks.versioned:
            notes.append(
                f"{marks.path} was written before marks carried course versions: it is assumed "
                "to match the others (grade again to be sure)"
            )
        for chapter, version in marks.versions.items():
            if chapter in versions and versions[chapter][0] != version:
                other = versions[chapter][1]
                raise MarksError(
                    f"{marks.path}: chapter {chapter} was graded against other hidden tests "
                    f"(course version {version}) than in {other} ({versions[chapter][0]}); "
                    "grade both with the same course"
                )
            versions.setdefault(chapter, (version, marks.path))
        for entry in marks.submissions:
            key = str(entry["path"])
            if key in seen:
                raise MarksError(
                    f"{marks.path}: {key} is graded here and in {seen[key]}; give each "
                    "submission once (merge shards with `autograder merge` first)"
                )
            seen[key] = marks.path
            submissions.append(entry)
    return submissions, {c: v for c, (v, _) in versions.items()}, notes


def merge(files: list[Marks]) -> dict:
    """One marks document from the N shards of one run, equal to what a single run writes.

    Raises:
        MarksError: a file that is not a shard, shards of different runs or course versions, a
            shard given twice, or a missing shard (naming which, and the command to rerun).
    """
    if not files:
        raise MarksError("merge needs the shards' marks files")
    first = files[0]
    for marks in files:
        if marks.shard is None:
            raise MarksError(
                f"{marks.path}: not a shard (written without --shard K/N); merge joins the "
                "files of `autograder grade --shard K/N`"
            )
        if (marks.shard["n"], marks.shard["inputs"]) != (first.shard["n"], first.shard["inputs"]):
            raise MarksError(
                f"{marks.path}: shard {marks.shard['k']}/{marks.shard['n']} of other inputs than "
                f"{first.path} (shard {first.shard['k']}/{first.shard['n']}): merge the shards "
                "of one command only"
            )
    by_k: dict[int, Marks] = {}
    for marks in files:
        k = marks.shard["k"]
        if k in by_k:
            raise MarksError(f"{marks.path}: shard {k} is given twice (also {by_k[k].path})")
        by_k[k] = marks
    n = first.shard["n"]
    missing = sorted(set(range(1, n + 1)) - set(by_k))
    if missing:
        names = ", ".join(f"{k}/{n}" for k in missing)
        raise MarksError(
            f"shard {names} missing from the {len(files)} files given (first {first.path}): "
            f"rerun `autograder grade ... --shard {missing[0]}/{n}` and merge again"
        )
    submissions, versions, _ = combine([by_k[k] for k in sorted(by_k)])
    paths = first.shard["paths"]
    order = {p: i for i, p in enumerate(paths)}
    for k, marks in by_k.items():
        expected = shard_of(paths, k, n)
        got = [str(entry["path"]) for entry in marks.submissions]
        if sorted(got) != sorted(expected):
            raise MarksError(
                f"{marks.path}: shard {k}/{n} holds {len(got)} results, expected {len(expected)} "
                f"(its inputs); the file is incomplete: rerun shard {k}/{n}"
            )
    submissions.sort(key=lambda entry: order[str(entry["path"])])
    document: dict = {"format": FORMAT, "course_versions": versions}
    feedback = {m.feedback_dir for m in files if m.feedback_dir}
    if len(feedback) == 1:
        document["feedback_dir"] = feedback.pop()
    document["submissions"] = submissions
    return document
