"""``python -m autograder verify``: prove every chapter is gradable and leaks nothing.

For every chapter: the source notebook follows the conventions (canaries, points, test cells),
the source runs in fast mode with no error outside the exercises' tests and no
DeprecationWarning or FutureWarning printed, and scores full marks; the released stub scores
zero on every exercise; then
``notebooks/`` is in sync with the source, and a leak scan finds no canary, solution line or
hidden-test line in any learner notebook.
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from autograder.course import (
    BEGIN_HIDDEN,
    BEGIN_SOLUTION,
    END_HIDDEN,
    END_SOLUTION,
    Chapter,
    Course,
    CourseError,
    cell_grade_id,
    cell_points,
    cell_source,
    exercise_id,
    is_solution_cell,
    is_test_cell,
    public_lines,
    read_json_notebook,
    region_lines,
    secret_lines,
)

__all__ = ["Check", "VerifyReport", "leak_scan", "verify"]

_POINTS_IN_HEADING = re.compile(r"\((\d+(?:\.\d+)?)\s+points?\)")


@dataclass
class Check:
    """One verified property: ``ok``, a one-line ``label`` and, on failure, ``details``."""

    ok: bool
    label: str
    details: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        """Plain data."""
        return {"ok": self.ok, "label": self.label, "details": list(self.details)}


@dataclass
class VerifyReport:
    """All checks of a verify run; ``passed`` when every one is ok."""

    checks: list[Check] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        """True when every check passed."""
        return all(check.ok for check in self.checks)

    def to_dict(self) -> dict:
        """Plain data."""
        return {"passed": self.passed, "checks": [c.to_dict() for c in self.checks]}

    def __str__(self) -> str:
        lines = []
        for check in self.checks:
            lines.append(f"{'ok  ' if check.ok else 'FAIL'} {check.label}")
            lines += [f"       {detail}" for detail in check.details]
        verdict = "verify passed" if self.passed else "verify FAILED"
        lines.append(f"{verdict} ({self.seconds:.1f} s)")
        return "\n".join(lines)


def verify(
    course: Course,
    notebooks: Path,
    *,
    jobs: int | None = None,
    timeout: float = 120.0,
    execute: bool = True,
    isolation="auto",
    only: list[str] | None = None,
) -> VerifyReport:
    """Run every check; see the module docstring.

    Args:
        course: the course to verify.
        notebooks: the released learner notebooks folder.
        jobs: parallel grading processes (None: one per core, at most two per chapter).
        timeout: seconds each cell may run while grading.
        execute: grade the source and the stub (False: only the static checks, no kernels).
        isolation: how grading confines the notebooks (see
            :func:`autograder.grader.sandbox.resolve`).
        only: chapters to check (numbers like ``"05"`` or folder names); None checks all. The
            release and leak checks always cover the whole course.

    Returns:
        A :class:`VerifyReport`.
    """
    from autograder.grader.pool import default_jobs, grade_paths
    from autograder.release import release, released_notebook

    start = time.perf_counter()
    report = VerifyReport()
    try:
        chapters = course.chapters()
        if only:
            chapters = [c for c in chapters if _selected(c.name, only)]
            if not chapters:
                raise CourseError(f"--chapter {' '.join(only)}: no such chapter in the course")
    except CourseError as exc:
        report.checks.append(Check(False, "course layout", [str(exc)]))
        report.seconds = time.perf_counter() - start
        return report
    if not chapters:
        report.checks.append(Check(False, "course layout", [f"no chapters in {course.source_dir}"]))
    for chapter in chapters:
        report.checks.append(_structure(chapter))
    try:
        sync = release(course, notebooks, check=True)
        report.checks.append(
            Check(sync.in_sync, f"{notebooks}/ in sync with {course.source_dir}/", sync.messages)
        )
    except CourseError as exc:
        report.checks.append(Check(False, "release", [str(exc)]))
    report.checks.append(leak_scan(course, notebooks))
    book = course.root.parent / "build" / "book" / "html"
    if book.is_dir():  # `make book` (and make test's book stage) built it: learners read it too
        report.checks.append(leak_scan_site(course, book))
    if execute and chapters:
        with tempfile.TemporaryDirectory(prefix="autograder-verify-") as tmp:
            paths, roles = [], []
            for chapter in chapters:
                try:
                    stub = Path(tmp) / chapter.released_name
                    stub.write_text(released_notebook(course, chapter), encoding="utf-8")
                    source = _edition_source(chapter, Path(tmp))
                except CourseError as exc:
                    report.checks.append(Check(False, f"{chapter.name}: release", [str(exc)]))
                    continue
                paths += [str(source), str(stub)]
                roles += [(chapter, "source"), (chapter, "stub")]
            workers = min(jobs or default_jobs(), len(paths)) if paths else 1
            results = grade_paths(
                paths, course, jobs=max(1, workers), timeout=timeout, isolation=isolation
            )
            for (chapter, role), result in zip(roles, results, strict=True):
                report.checks.append(_judge_grading(chapter, role, result))
    report.seconds = time.perf_counter() - start
    return report


def _edition_source(chapter: Chapter, tmp: Path) -> Path:
    """The source notebook graded for full marks: the file itself, or its translated edition."""
    if chapter.language == "en":
        return chapter.source
    nb = chapter.read_source()  # CourseError when the catalog is incomplete: reported by caller
    nb.setdefault("metadata", {}).setdefault("autograder", {})["language"] = chapter.language
    nb["metadata"]["autograder"]["chapter"] = chapter.name
    path = tmp / f"{chapter.name}.source-{chapter.language}.ipynb"
    path.write_text(json.dumps(nb, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def _selected(name: str, only: list[str]) -> bool:
    return any(name == o or name.split("-", 1)[0] == o.zfill(2) for o in only)


def _judge_grading(chapter: Chapter, role: str, result) -> Check:
    if not result.graded:
        return Check(False, f"{chapter.name}: {role} could not be graded", [result.error or ""])
    total = f"{result.points:g} / {result.max_points:g}"
    if role == "source":
        bad = [e for e in result.exercises if e.status != "passed"]
        details = [f"{e.name}: {e.feedback}" for e in bad] + [f"note: {n}" for n in result.notes]
        problems = result.cell_problems  # an error outside the tests, a deprecation warning
        return Check(
            not bad and not problems,
            f"{chapter.name}: source runs cleanly and scores full marks ({total})",
            (details if bad else []) + problems,
        )
    bad = [e for e in result.exercises if e.points > 0]
    details = [
        f"{e.name} earns {e.points:g} points on the stub: its tests do not check the learner's work"
        for e in bad
    ]
    return Check(not bad, f"{chapter.name}: released stub scores zero ({total})", details)


def _structure(chapter: Chapter) -> Check:
    """Conventions the grader and the leak scan rely on."""
    problems = []
    try:
        nb = read_json_notebook(chapter.source)
    except CourseError as exc:
        return Check(False, f"{chapter.name}: structure", [str(exc)])
    cells = nb["cells"]
    ids = [cell_grade_id(c) for c in cells if cell_grade_id(c)]
    duplicates = sorted({g for g in ids if ids.count(g) > 1})
    if duplicates:
        problems.append(f"duplicate grade_ids: {', '.join(duplicates)}")
    solutions = {cell_grade_id(c): c for c in cells if is_solution_cell(c)}
    tests = {cell_grade_id(c): c for c in cells if is_test_cell(c)}
    for gid in ids:
        if not gid.startswith(chapter.prefix):
            problems.append(f"grade_id {gid} does not start with {chapter.prefix}")
    for index, cell in enumerate(cells):
        if cell.get("cell_type") == "code" and (cell.get("outputs") or cell.get("execution_count")):
            problems.append(f"cell {index + 1} has outputs or an execution count: clear them")
    heading = None
    for cell in cells:
        if cell.get("cell_type") == "markdown" and "#" in cell_source(cell):
            heading = cell_source(cell)
        gid = cell_grade_id(cell)
        if gid in solutions:
            source = cell_source(cell)
            if not region_lines(source, BEGIN_SOLUTION, END_SOLUTION):
                problems.append(f"{gid}: no ### BEGIN SOLUTION / ### END SOLUTION region")
            elif f"# CANARY {gid}" not in "\n".join(
                region_lines(source, BEGIN_SOLUTION, END_SOLUTION)
            ):
                problems.append(f"{gid}: the solution region lacks its line '# CANARY {gid}'")
            test = tests.get(f"{gid}_tests")
            if test is None:
                problems.append(f"{gid}: no test cell {gid}_tests")
            else:
                points = cell_points(test)
                shown = _POINTS_IN_HEADING.findall(heading or "")
                if points <= 0:
                    problems.append(f"{gid}_tests: no points")
                elif not shown or float(shown[-1]) != points:
                    problems.append(
                        f"{gid}: the exercise heading should show '({points:g} points)'"
                        + (f", it shows ({shown[-1]} points)" if shown else "")
                    )
        if gid in tests:
            hidden = "\n".join(region_lines(cell_source(cell), BEGIN_HIDDEN, END_HIDDEN))
            wanted = (f"# CANARY {gid}_hidden", f"# CANARY {exercise_id(gid)}_hidden")
            if BEGIN_HIDDEN in cell_source(cell) and not any(w in hidden for w in wanted):
                problems.append(f"{gid}: the hidden-test region lacks its line '{wanted[1]}'")
            if len(re.findall(r"^hidden_test\(", hidden, re.MULTILINE)) != 1:
                problems.append(
                    f"{gid}: the hidden tests must call autograder.checks.hidden_test(run, "
                    "check, seeds=...) once, at the top level: the learner's half runs in the "
                    "kernel, the comparison in the grader"
                )
            if not cell_source(cell).lstrip().startswith("#"):
                problems.append(
                    f"{gid}: the test cell should start with a comment saying what it checks"
                )
            if exercise_id(gid) not in solutions:
                problems.append(f"{gid}: no solution cell {exercise_id(gid)}")
    label = f"{chapter.name}: structure ({len(solutions)} exercises, "
    label += f"{sum(cell_points(c) for c in tests.values()):g} points)"
    return Check(not problems, label, problems)


def course_secrets(course: Course) -> dict[str, str]:
    """Every secret line of the course (solutions, hidden tests) -> the chapter it comes from.

    A line that some chapter shows learners anyway (``raise AssertionError(``) is no secret.
    """
    secrets: dict[str, str] = {}
    public: set[str] = set()  # lines some chapter shows learners: not a secret of any other
    for chapter in course.chapters():
        source = read_json_notebook(chapter.source)
        if chapter.language != "en":  # the edition's own hidden lines (its translated messages)
            for line in secret_lines(chapter.read_source()):
                secrets.setdefault(line, chapter.name)
        for line in secret_lines(source):
            secrets.setdefault(line, chapter.name)
        for cell in source["cells"]:
            public |= public_lines(cell_source(cell))
    return {line: name for line, name in secrets.items() if line not in public}


def leak_scan_text(course: Course, texts: dict[str, str]) -> list[str]:
    """The leaks in named texts (a built HTML page's visible text, say): canaries, secret lines."""
    secrets = course_secrets(course)
    leaks = []
    for name, text in texts.items():
        if "CANARY" in text:
            leaks.append(f"{name}: contains a CANARY line")
        for line in text.split("\n"):
            origin = secrets.get(line.strip())
            if origin:
                leaks.append(
                    f"{name}: a line of {origin}'s solutions or hidden tests: {line.strip()[:80]!r}"
                )
    return leaks


def leak_scan_site(course: Course, site: Path) -> Check:
    """The leak scan over a built book (``make book``): every HTML page's visible text."""
    from autograder.book import page_text

    pages = sorted(Path(site).rglob("*.html"))
    try:
        leaks = leak_scan_text(course, {str(p.relative_to(site)): page_text(p) for p in pages})
    except CourseError as exc:
        return Check(False, "leak scan of the book", [str(exc)])
    return Check(not leaks, f"leak scan: the book, {len(pages)} pages in {site}", leaks[:50])


def leak_scan(course: Course, notebooks: Path) -> Check:
    """Look for any canary, solution line or hidden-test line in the learner notebooks.

    Every ``.ipynb`` under ``notebooks/`` (except the ``backup/`` folder) is read as text: any
    ``CANARY`` string, and any line equal (after stripping) to a secret line of any chapter
    (see :func:`autograder.course.secret_lines`), in a cell's source or outputs, is a leak. A
    line that some chapter shows learners anyway (``raise AssertionError(``) is no secret.

    Returns:
        A :class:`Check` naming each leak's file, cell and origin.
    """
    try:
        secrets = course_secrets(course)
    except CourseError as exc:
        return Check(False, "leak scan", [str(exc)])
    leaks, files = [], 0
    folder = Path(notebooks)
    candidates = sorted(folder.rglob("*.ipynb")) if folder.is_dir() else []
    for path in candidates:
        rel = path.relative_to(folder)
        if rel.parts[0] in ("backup", ".ipynb_checkpoints"):
            continue
        files += 1
        text = path.read_text(encoding="utf-8", errors="replace")
        if "CANARY" in text:
            leaks.append(f"{path}: contains a CANARY line")
        try:
            nb = json.loads(text)
        except ValueError:
            leaks.append(f"{path}: not valid JSON, cannot be scanned")
            continue
        for index, cell in enumerate(nb.get("cells", [])):
            texts = [cell_source(cell)]
            for output in cell.get("outputs", []):
                value = output.get("text", "")
                texts.append("".join(value) if isinstance(value, list) else str(value))
            for chunk in texts:
                for line in chunk.split("\n"):
                    origin = secrets.get(line.strip())
                    if origin:
                        leaks.append(
                            f"{path} cell {index + 1}: a line of {origin}'s solutions or hidden "
                            f"tests: {line.strip()[:80]!r}"
                        )
    label = f"leak scan: {files} notebooks, {len(secrets)} secret lines"
    return Check(not leaks, label, leaks[:50])
