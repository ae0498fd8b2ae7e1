"""Grade learner notebooks against the hidden tests of their chapter's source notebook.

The submission is merged with the source the way nbgrader's autograde does: the learner's cells
are kept, every test cell (and read-only cell) is replaced by the source's version by grade_id,
deleted ones are put back, and a deleted solution cell is replaced by the stub and reported. The
merged notebook runs in a fresh kernel (see :mod:`autograder.grader.execute`); each exercise
earns its points when its test cell passes, and gets one feedback line: the exception type and
message of every distinct failing check (each hidden input, each independent check; see
:func:`autograder.checks.soft`), never a traceback or test source.
"""

from __future__ import annotations

import asyncio
import html
import os
import re
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
    is_locked_cell,
    is_solution_cell,
    is_test_cell,
    read_json_notebook,
    region_lines,
    secret_lines,
)
from autograder.grader.deps import needed
from autograder.grader.execute import GradingError, Step, WarmKernel, run_steps
from autograder.grader.judge import SEPARATOR, judge
from autograder.grader.sandbox import Isolation, resolve
from autograder.i18n import translate_feedback
from autograder.similarity import companion_matches

__all__ = [
    "ExerciseResult",
    "GradeResult",
    "feedback_html",
    "grade_notebook",
    "grade_submission",
    "grade_submission_async",
    "kernel_settings",
]

DEFAULT_TIMEOUT = 60.0
# Modules with state that legitimately changes at run time (restoring it would break them).
_UNGUARDED = {
    "__future__",
    "matplotlib",
    "tqdm",
    "IPython",
    "ipywidgets",
    "ipykernel",
    "autograder",
}
_FEEDBACK_CHARS = 500  # for each failing check of an exercise: our hints fit; a long error is cut
_STUB = "raise NotImplementedError()"
# Code a learner has no reason to write in an exercise; flagged for the instructor, never scored.
_INTERNALS = "kernel|grader|_harness|judge|transport|execute"
_SUSPICIOUS = [
    (
        r"\bshowtraceback\b|\bshowsyntaxerror\b|\bCustomTB\b|set_custom_exc",
        "IPython's error display",
    ),
    (r"\bexcepthook\b", "sys.excepthook"),
    (
        r"input_transformer|ast_transformers|\.events\.register",
        "IPython's input transformers/events",
    ),
    (r"\bsettrace\b|\bsetprofile\b|addaudithook|\btracemalloc\b", "tracing or audit hooks"),
    (r"__code__|__globals__|__closure__|__builtins__", "function internals"),
    (r"_getframe|currentframe|\bf_back\b|\bf_locals\b|inspect\.stack", "frames of the caller"),
    (r"\bctypes\b", "ctypes"),
    (r"\bclass\s+\w+\s*\(\s*(?:torch\.)?Tensor\s*[,)]", "a tensor subclass of its own"),
    (  # kernel/ and grader/ (see autograder/__init__.py), and the flat names they had before
        rf"autograder\.(?:{_INTERNALS})"
        rf"|\bfrom\s+autograder\s+import\s+(?:\([^)]*?|[\w \t,]*?)\b(?:{_INTERNALS})\b"
        r"|_PROBE|_COLLECT",
        "the grader's internals",
    ),
    (r"\bimportlib\b|__import__\(|\breload\(", "dynamic imports"),
    (r"\bsubprocess\b|os\.system|os\.popen|\bos\.exec|posix_spawn", "other programs"),
    (r"\bgc\.get_(?:objects|referrers|referents)\b", "the garbage collector's object lists"),
    (r"companion\.\w+\.__file__|companion\.__file__|\bgetsource\b", "the companion's source"),
    (r"sys\.modules\s*\[|sys\.meta_path|sys\.path_hooks", "the import system"),
    (
        # a statement (not an annotation's default: ``device: torch.device = "cpu"``)
        r"(?m)(?:^|;)\s*(?:torch|companion|autograder|builtins|IPython|np|numpy)(?:\.\w+)+\s*=(?!=)",
        "assignment to a library's attribute",
    ),
    (r"\bsetattr\(\s*(?:torch|companion|autograder|builtins)\b", "setattr on a library"),
    (
        r"\bcompanion(?:\.\w+)*\._[A-Za-z]\w*|\bfrom\s+companion[\w.]*\s+import\s+\(?\s*_[A-Za-z]"
        r"|\bvars\(\s*companion|\bcompanion(?:\.\w+)*\.__dict__",
        "the companion's private names",
    ),
    (
        r"\bsignal\s*\(\s*(?:signal\.|_signal\.)?(?:SIGINT|SIGTERM|2\b|15\b)|\bSIG_IGN\b"
        r"|pthread_sigmask",
        "signal handling (SIGINT/SIGTERM)",
    ),
    (r"['\"]/proc\b|\.ipynb\b", "/proc or notebook files"),
]


@dataclass
class ExerciseResult:
    """One exercise of a graded notebook.

    Attributes:
        grade_id: the exercise's grade_id (its solution cell's, e.g. ``ch04_evaluate``).
        points: points earned. max_points: points possible.
        status: ``passed``, ``failed``, ``timeout``, ``died``, ``missing`` or ``not-run``.
        feedback: one line for the learner ("passed", or the first failing check's message).
    """

    grade_id: str
    points: float
    max_points: float
    status: str
    feedback: str

    @property
    def name(self) -> str:
        """The grade_id without its ``chNN_`` prefix (``evaluate``)."""
        return re.sub(r"^ch\d{2}_", "", self.grade_id)

    def to_dict(self) -> dict:
        """Plain data (what ``--json`` prints)."""
        return {
            "grade_id": self.grade_id,
            "name": self.name,
            "points": self.points,
            "max_points": self.max_points,
            "status": self.status,
            "feedback": self.feedback,
        }


@dataclass
class GradeResult:
    """The grading of one submission: a table of exercises, or the reason it was not graded.

    Attributes:
        path: the submission file. chapter: its chapter, when known.
        exercises: one :class:`ExerciseResult` per graded exercise, in notebook order.
        error: why the submission could not be graded (then ``exercises`` is empty).
        notes: what the grader did about the notebook (restored cells, kernel restarts).
        flags: code an instructor may want to review (never affects the score).
        cell_problems: cells that raised (outside the exercises' tests) or printed a
            DeprecationWarning or FutureWarning; never affects the score (``autograder verify``
            requires none in the course's own source).
        seconds: wall time spent grading.
        language: the edition of the submitted notebook (``"en"``, ``"zh"``): its feedback, and
            the headings of :func:`feedback_html`, are in that language.
    """

    path: str
    chapter: str | None = None
    exercises: list[ExerciseResult] = field(default_factory=list)
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    cell_problems: list[str] = field(default_factory=list)
    seconds: float = 0.0
    language: str = "en"
    steps_run: int = field(default=0, repr=False)  # cells and tests run (a check runs fewer)

    @property
    def graded(self) -> bool:
        """True when the submission was graded (``error`` is None)."""
        return self.error is None

    @property
    def points(self) -> float:
        """Points earned over all exercises."""
        return sum(e.points for e in self.exercises)

    @property
    def max_points(self) -> float:
        """Points possible over all exercises."""
        return sum(e.max_points for e in self.exercises)

    def to_dict(self) -> dict:
        """Plain data (what ``--json`` prints for this submission)."""
        return {
            "path": self.path,
            "chapter": self.chapter,
            "graded": self.graded,
            "error": self.error,
            "points": self.points,
            "max_points": self.max_points,
            "exercises": [e.to_dict() for e in self.exercises],
            "notes": list(self.notes),
            "flags": list(self.flags),
            "cell_problems": list(self.cell_problems),
            "seconds": round(self.seconds, 2),
            "language": self.language,
        }

    @classmethod
    def from_dict(cls, data: dict) -> GradeResult:
        """Rebuild a result from :meth:`to_dict` output."""
        exercises = [
            ExerciseResult(e["grade_id"], e["points"], e["max_points"], e["status"], e["feedback"])
            for e in data.get("exercises", [])
        ]
        return cls(
            path=data["path"],
            chapter=data.get("chapter"),
            exercises=exercises,
            error=data.get("error"),
            notes=list(data.get("notes", [])),
            flags=list(data.get("flags", [])),
            cell_problems=list(data.get("cell_problems", [])),
            seconds=float(data.get("seconds", 0.0)),
            language=data.get("language", "en"),
        )

    def __str__(self) -> str:
        if not self.graded:
            return f"{self.path}: not graded: {self.error}"
        head = (
            f"{self.path}: chapter {self.chapter}, "
            f"{_num(self.points)} / {_num(self.max_points)} points"
        )
        width = max([len("exercise")] + [len(e.name) for e in self.exercises])
        lines = [head, f"  {'exercise':<{width}}  points  feedback"]
        for e in self.exercises:
            score = f"{_num(e.points)} / {_num(e.max_points)}"
            lines.append(f"  {e.name:<{width}}  {score:>6}  {e.feedback}")
        lines += [f"  note: {note}" for note in self.notes]
        lines += [f"  review: {flag}" for flag in self.flags]
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        return _table_html(self)

    def plot(self, ax=None):
        """Bar chart of points earned (filled) against points possible (outline) per exercise.

        Args:
            ax: a matplotlib Axes to draw on (a new figure when omitted).

        Returns:
            The matplotlib Axes.
        """
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(6, 0.5 + 0.4 * max(1, len(self.exercises))))
        names = [e.name for e in self.exercises]
        ax.barh(names, [e.max_points for e in self.exercises], color="none", edgecolor="gray")
        ax.barh(names, [e.points for e in self.exercises], color="tab:green")
        ax.invert_yaxis()
        ax.set_xlabel("points")
        ax.set_title(f"{Path(self.path).name}: {_num(self.points)} / {_num(self.max_points)}")
        return ax


def grade_notebook(
    path: str | os.PathLike,
    course: Course,
    *,
    chapter: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    fast: bool = True,
    threads: int | None = None,
    max_restarts: int = 3,
    isolation: Isolation | str = "auto",
) -> GradeResult:
    """Grade one learner notebook.

    Args:
        path: the submission (.ipynb).
        course: the course whose source notebooks hold the hidden tests.
        chapter: the chapter it must belong to (name or number); None to read it from the notebook.
        timeout: seconds each cell may run before it is stopped.
        fast: set ``COURSE_FAST=1`` in the kernel, so chapters shrink their demonstration loops.
        threads: limit the kernel's math libraries to this many threads (parallel grading).
        max_restarts: kernel restarts (after a crash or hang) allowed before giving up the rest.
        isolation: an :class:`autograder.grader.sandbox.Isolation`, or ``"sandbox"`` (required),
            ``"none"`` (unconfined) or ``"auto"`` (the sandbox where it works).

    Returns:
        A :class:`GradeResult`; a broken submission gives one with ``error`` set, it does not raise.

    Example:
        >>> result = grade_notebook("notebooks/04-training-loop.ipynb", Course(Path("course")))  # doctest: +SKIP
        >>> print(result)  # doctest: +SKIP
    """
    start = time.perf_counter()
    try:
        submission = read_json_notebook(Path(path))
    except CourseError as exc:
        return GradeResult(path=str(path), error=str(exc), seconds=time.perf_counter() - start)
    return grade_submission(
        submission,
        course,
        path=str(path),
        chapter=chapter,
        timeout=timeout,
        fast=fast,
        threads=threads,
        max_restarts=max_restarts,
        isolation=isolation,
        start=start,
    )


def grade_submission(
    submission: dict,
    course: Course,
    *,
    path: str = "<notebook>",
    chapter: str | None = None,
    exercise: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    fast: bool = True,
    threads: int | None = None,
    max_restarts: int = 3,
    isolation: Isolation | str = "auto",
    start: float | None = None,
) -> GradeResult:
    """Grade a learner notebook given as JSON data: all of it, or one exercise.

    Args:
        submission: the notebook (nbformat 4 JSON data).
        course: the course whose source notebooks hold the hidden tests.
        path: how results and messages name the notebook.
        chapter: the chapter it must belong to (name or number); None to read it from the notebook.
        exercise: one exercise's grade_id (``ch04_evaluate``): only the cells that exercise needs
            run (see :mod:`autograder.grader.deps`), and only it is judged, by the same hidden
            tests and rules as a whole grading. None grades every exercise.
        timeout, fast, threads, max_restarts, isolation: as for :func:`grade_notebook`.
        start: when the grading started (``time.perf_counter()``), for ``seconds``.

    Returns:
        A :class:`GradeResult` (with one exercise when ``exercise`` is given); a broken
        submission gives one with ``error`` set, it does not raise.
    """
    return run_coroutine(
        grade_submission_async(
            submission,
            course,
            path=path,
            chapter=chapter,
            exercise=exercise,
            timeout=timeout,
            fast=fast,
            threads=threads,
            max_restarts=max_restarts,
            isolation=isolation,
            start=start,
        )
    )


async def grade_submission_async(
    submission: dict,
    course: Course,
    *,
    path: str = "<notebook>",
    chapter: str | None = None,
    exercise: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    fast: bool = True,
    threads: int | None = None,
    max_restarts: int = 3,
    isolation: Isolation | str = "auto",
    start: float | None = None,
    warm: WarmKernel | None = None,
) -> GradeResult:
    """:func:`grade_submission` in the caller's event loop, where ``warm`` was started."""
    start = time.perf_counter() if start is None else start
    result = GradeResult(path=path)
    if isinstance(isolation, str):
        isolation = resolve(isolation)
    try:
        found = course.chapter_of(submission)
        if chapter is not None:
            wanted = course.chapter(chapter)
            if wanted.name != found.name:
                raise CourseError(
                    f"wrong chapter: this notebook is chapter {found.name}, but {wanted.name} is "
                    "being graded; submit the notebook of that chapter"
                )
        result.chapter, result.language = found.name, found.language
        await _grade(
            submission,
            found,
            result,
            timeout,
            fast,
            threads,
            max_restarts,
            isolation,
            exercise,
            warm,
        )
    except (CourseError, GradingError) as exc:
        result.error = str(exc)
        result.exercises = []
    finally:
        if warm is not None and warm.session.alive and result.error is not None:
            await warm.close()  # not used: the grading stopped before it ran
    result.seconds = time.perf_counter() - start
    return result


def kernel_settings(
    chapter: Chapter, *, fast: bool = True, threads: int | None = None, source: dict | None = None
) -> dict:
    """The kernel a grading of ``chapter`` runs in: ``protect``, ``env`` and ``course_root``
    for :func:`autograder.grader.execute.run_steps` (and ``start_warm``)."""
    env = {"MPLBACKEND": "Agg", "PYTHONUNBUFFERED": "1"}
    if fast:
        env["COURSE_FAST"] = "1"
    if threads:
        for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            env[name] = str(threads)
    source = chapter.read_source() if source is None else source
    return {
        "protect": _protected_modules(source),
        "env": env,
        "course_root": chapter.source.parents[2],
    }


def run_coroutine(coroutine):
    """asyncio.run, also from inside a running loop (called in a notebook, or beside another
    library's loop): there it runs in a fresh thread with its own loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


async def _grade(
    submission,
    chapter: Chapter,
    result,
    timeout,
    fast,
    threads,
    max_restarts,
    isolation,
    only,
    warm,
):
    source = chapter.read_source()
    steps, tests, exercises, notes = _plan(source, submission, chapter)
    ran = len(warm.ran) if warm is not None else 0
    if ran and steps[:ran] != [step for step, _ in warm.ran]:
        await warm.close()  # it ran cells this notebook no longer starts with: a fresh kernel
        warm, ran = None, 0
    if only is not None:
        steps, exercises = _only(only, steps, tests, exercises, chapter, also=ran)
    result.notes.extend(notes)
    result.steps_run = len(steps)
    result.flags.extend(_scan(submission, source))
    report = await run_steps(
        steps,
        tests,
        timeout=timeout,
        max_restarts=max_restarts,
        isolation=isolation,
        warm=warm,
        **kernel_settings(chapter, fast=fast, threads=threads, source=source),
    )
    result.notes.extend(report.notes)
    public = "\n".join(_strip_solutions(cell_source(c)) for c in source["cells"])
    secrets_ = {line for line in secret_lines(source) if line not in public}
    outcomes = report.outcomes
    for step, outcome in zip(steps, outcomes, strict=True):
        if step.kind == "test" and outcome.data is not None:
            verdict = judge(step.source, tests[step.source][1], outcome.data)
            outcome.passed = verdict.passed
            outcome.ename, outcome.evalue = verdict.ename, verdict.evalue
            outcome.flags += verdict.flags
    for step, outcome in zip(steps, outcomes, strict=True):
        if outcome.status == "timeout" and "ignored the interrupt" in outcome.evalue:
            outcome.flags.append(
                f"{step.label} ignored the interrupt (SIGINT), so the kernel had to be killed"
            )
        for flag in outcome.flags:
            if flag not in result.flags:
                result.flags.append(flag)
        result.cell_problems += [f"{step.label}: {line}" for line in outcome.warnings]
        if step.kind == "cell" and outcome.status in ("error", "timeout", "died"):
            result.cell_problems.append(
                f"{step.label} stopped ({outcome.status}): {outcome.ename}: {outcome.evalue[:300]}"
            )
    for exercise in exercises:
        test = outcomes[exercise["test_step"]]
        step = exercise["solution_step"]
        solution = outcomes[step] if step is not None else None
        status, feedback = _judge(exercise, test, solution)
        result.exercises.append(
            ExerciseResult(
                grade_id=exercise["id"],
                points=exercise["points"] if status == "passed" else 0.0,
                max_points=exercise["points"],
                status=status,
                feedback=translate_feedback(_sanitize(feedback, secrets_), chapter.language),
            )
        )


def _plan(source: dict, submission: dict, chapter: Chapter):
    """Merge submission and source into steps; list the exercises; note what was restored."""
    src_cells = source["cells"]
    by_id = {}
    for index, cell in enumerate(src_cells):
        gid = cell_grade_id(cell)
        if gid is not None and gid.startswith(chapter.prefix):
            by_id.setdefault(gid, (index, cell))
    if not any(is_solution_cell(c) for c in submission["cells"] if cell_grade_id(c) in by_id):
        n = sum(1 for _, c in by_id.values() if is_solution_cell(c))
        raise CourseError(
            f"none of the {n} exercise cells of chapter {chapter.name} is in this notebook: is "
            "it the right notebook, saved after the work was done?"
        )
    merged, seen, notes = [], set(), []
    for cell in submission["cells"]:
        gid = cell_grade_id(cell)
        if gid in by_id and gid not in seen:
            seen.add(gid)
            src_cell = by_id[gid][1]
            if is_locked_cell(src_cell):
                given = cell_source(cell).strip()
                original = cell_source(src_cell)
                if is_test_cell(src_cell) and given not in (
                    original.strip(),
                    _strip_hidden(original).strip(),
                ):
                    notes.append(
                        f"the tests of {_short(exercise_id(gid))} were changed; the originals were run"
                    )
                merged.append((gid, src_cell, "locked"))
            else:
                merged.append((gid, cell, "solution" if is_solution_cell(src_cell) else "cell"))
        else:
            merged.append((None, cell, "cell"))
    missing_solutions = set()
    order = [gid for gid in sorted(by_id, key=lambda g: by_id[g][0])]
    for gid in order:
        if gid in seen:
            continue
        src_cell = by_id[gid][1]
        if is_solution_cell(src_cell):
            missing_solutions.add(gid)
            cell = {**src_cell, "source": _stub_source(cell_source(src_cell))}
            kind = "solution"
        else:
            cell, kind = src_cell, "locked"
            if is_test_cell(src_cell):
                notes.append(
                    f"the tests of {_short(exercise_id(gid))} were missing; the originals were run"
                )
        merged.insert(_insert_at(merged, gid, by_id), (gid, cell, kind))
        seen.add(gid)
    steps, tests, step_of = [], {}, {}
    for position, (gid, cell, kind) in enumerate(merged):
        if cell.get("cell_type") != "code":
            continue
        code = cell_source(cell)
        if kind == "locked" and is_test_cell(cell):
            hidden = "\n".join(region_lines(code, BEGIN_HIDDEN, END_HIDDEN))
            tests[gid] = (_strip_hidden(code), hidden)
            step_of[gid] = len(steps)
            steps.append(Step("test", gid, f"the tests of {_short(exercise_id(gid))}", gid))
        elif kind == "solution":
            step_of[gid] = len(steps)
            steps.append(Step("cell", code, f"your solution cell for {_short(gid)}", gid))
        else:
            steps.append(Step("cell", code, f"cell {position + 1}", gid))
    exercises = []
    for gid in order:
        src_cell = by_id[gid][1]
        if not is_test_cell(src_cell):
            continue
        ex = exercise_id(gid)
        exercises.append(
            {
                "id": ex,
                "points": cell_points(src_cell),
                "test_step": step_of[gid],
                "solution_step": step_of.get(ex),
                "missing": ex in missing_solutions,
            }
        )
    return steps, tests, exercises, notes


def steps_ahead(submission: dict, chapter: Chapter) -> list[Step]:
    """The cells a kernel may run before a check of ``submission`` is asked for: its first cells
    up to the first exercise, as long as each is the course's own code unchanged.

    Grading runs them first whatever exercise is checked; so a kernel that ran them ahead
    (:func:`autograder.grader.execute.start_warm`) leaves a check only the rest. A cell the
    learner wrote or edited stops the list (it could be slow, or hang, and no check must wait
    for it unless its exercise needs it). Empty for a notebook that cannot be planned.
    """
    source = chapter.read_source()
    try:
        steps = _plan(source, submission, chapter)[0]
    except CourseError:
        return []
    ours = {cell_source(c) for c in source["cells"] if c.get("cell_type") == "code"}
    solutions = {
        cell_grade_id(c) for c in source["cells"] if is_solution_cell(c) or is_test_cell(c)
    }
    ahead = []
    for step in steps:
        if step.kind != "cell" or step.grade_id in solutions or step.source not in ours:
            break
        ahead.append(step)
    return ahead


def _only(
    grade_id: str, steps: list, tests: dict, exercises: list, chapter: Chapter, also: int = 0
):
    """The steps one exercise needs, and that exercise alone (its step indices renumbered).

    Kept: the first cell (the chapter's setup), the first ``also`` steps (cells a kernel ran
    ahead), the exercise's solution cell and tests, and every earlier cell they need (names they
    read, global state; see :func:`autograder.grader.deps.needed`). Other exercises' tests run
    only for a name they bind that a kept cell reads; nothing after the exercise's tests runs.
    """
    found = [e for e in exercises if e["id"] == grade_id]
    if not found:
        listed = ", ".join(_short(e["id"]) for e in exercises)
        raise CourseError(
            f"chapter {chapter.name} has no exercise {_short(grade_id)!r} (its exercises: {listed})"
        )
    exercise = dict(found[0])
    last = exercise["test_step"]
    roots = {last} | (
        {exercise["solution_step"]} if exercise["solution_step"] is not None else set()
    )
    roots.add(0)  # the chapter's setup cell (imports, seeds, the device): it always runs
    roots.update(range(min(also, last)))
    codes = []
    for step in steps[: last + 1]:
        if step.kind == "test":
            visible, hidden = tests[step.source]
            codes.append(visible + "\n" + hidden)
        else:
            codes.append(step.source)
    others = {i for i, step in enumerate(steps[:last]) if step.kind == "test"}
    keep = needed(codes, roots, stateless=others)
    renumber, kept = {}, []
    for index, step in enumerate(steps[: last + 1]):
        if keep[index]:
            renumber[index] = len(kept)
            kept.append(step)
    exercise["test_step"] = renumber[last]
    if exercise["solution_step"] is not None:
        exercise["solution_step"] = renumber[exercise["solution_step"]]
    return kept, [exercise]


def _insert_at(merged: list, gid: str, by_id: dict) -> int:
    """Where a restored cell goes: after the nearest earlier graded cell, else before a later one."""
    rank = by_id[gid][0]
    best_after, best_before = None, None
    for position, (other, _, _) in enumerate(merged):
        if other is None or other not in by_id:
            continue
        other_rank = by_id[other][0]
        if other_rank < rank and (
            best_after is None or other_rank >= by_id[merged[best_after][0]][0]
        ):
            best_after = position
        if other_rank > rank and best_before is None:
            best_before = position
    if best_after is not None:
        return best_after + 1
    if best_before is not None:
        return best_before
    return len(merged)


def _strip_hidden(source: str) -> str:
    return "\n".join(region_lines(source, BEGIN_HIDDEN, END_HIDDEN, inside=False))


def _stub_source(source: str) -> str:
    lines, inside = [], False
    for line in source.split("\n"):
        if BEGIN_SOLUTION in line:
            inside = True
            lines.append(line[: len(line) - len(line.lstrip())] + _STUB)
        elif END_SOLUTION in line:
            inside = False
        elif not inside:
            lines.append(line)
    return "\n".join(lines)


def _judge(exercise: dict, test, solution) -> tuple[str, str]:
    name = _short(exercise["id"])
    if test.passed:
        return "passed", "passed"
    if exercise["missing"]:
        return "missing", (
            f"your solution cell for {name} is missing (deleted?): copy it back from a fresh "
            "copy of the released notebook and fill it in"
        )
    if solution is not None and solution.status == "died":
        return "died", f"KernelDied in your solution cell: {solution.evalue}"
    if solution is not None and solution.status == "timeout":
        return "timeout", f"TimeoutError in your solution cell: {solution.evalue}"
    if test.status in ("died", "timeout", "not-run"):
        status = {"died": "died", "timeout": "timeout", "not-run": "not-run"}[test.status]
        return status, f"{test.ename}: {test.evalue}" if test.ename else "not run"
    if (
        solution is not None
        and solution.status == "error"
        and solution.ename not in ("NotImplementedError",)
    ):
        return "failed", f"{solution.ename} in your solution cell: {solution.evalue}"
    if test.ename == "NotImplementedError" and not test.evalue:
        return "failed", "NotImplementedError: not implemented yet (the stub still raises it)"
    return "failed", f"{test.ename}: {test.evalue}" if test.evalue else test.ename


def _strip_solutions(source: str) -> str:
    """What a learner sees of a cell: without its solution and hidden-test regions."""
    lines = region_lines(source, BEGIN_SOLUTION, END_SOLUTION, inside=False)
    return "\n".join(region_lines("\n".join(lines), BEGIN_HIDDEN, END_HIDDEN, inside=False))


def _sanitize(feedback: str, secrets_: set[str]) -> str:
    """One line, bounded, and without any line of a solution or hidden test.

    ``secrets_`` holds only lines a learner never sees: a call such as ``model.train()`` that
    the chapter's visible text also shows stays readable in a message. Several failing checks
    (separated by :data:`autograder.grader.judge.SEPARATOR`) are each bounded and joined by " | ".
    """
    if SEPARATOR in feedback:
        return " | ".join(_sanitize(part, secrets_) for part in feedback.split(SEPARATOR))
    for secret in sorted(secrets_, key=len, reverse=True):
        for line in secret.split("\n"):
            line = line.strip()
            if len(line) >= 8 and line in feedback:
                feedback = feedback.replace(line, "[hidden]")
    feedback = re.sub(r"# CANARY \S+", "[hidden]", feedback)
    feedback = " ".join(feedback.split())
    if len(feedback) > _FEEDBACK_CHARS:
        feedback = feedback[: _FEEDBACK_CHARS - 1].rstrip() + "…"
    return feedback


def _protected_modules(source: dict) -> list[str]:
    """Modules the harness restores before each test: those the chapter imports at top level."""
    code = "\n".join(cell_source(c) for c in source["cells"] if c.get("cell_type") == "code")
    modules = ["builtins", "autograder.checks"]
    for match in re.finditer(r"^(?:import|from)\s+([\w.]+)", code, re.MULTILINE):
        name = match.group(1)
        if name.split(".")[0] not in _UNGUARDED and name not in modules:
            modules.append(name)
    if "torch" in modules and "torch.testing" not in modules:
        modules.append("torch.testing")
    return modules


def _scan(submission: dict, source: dict) -> list[str]:
    """Flags for learner-written code that reaches into the grader, IPython or library internals."""
    known = {cell_source(c).strip() for c in source["cells"]}
    known |= {_stub_source(cell_source(c)).strip() for c in source["cells"] if is_solution_cell(c)}
    flags = []
    for index, cell in enumerate(submission["cells"]):
        if cell.get("cell_type") != "code" or is_test_cell(cell):
            continue
        code = cell_source(cell)
        if code.strip() in known:
            continue
        for pattern, what in _SUSPICIOUS:
            match = re.search(pattern, code)
            if match:
                snippet = " ".join(match.group(0).split())[:60]
                flags.append(f"cell {index + 1} touches {what} ({snippet!r})")
        copied = _copied(code)
        if copied:
            flags.append(f"cell {index + 1} matches {copied}: transcribed from the companion?")
    return flags


def _copied(code: str) -> str:
    """What of the companion's source ``code`` repeats, one phrase ("" when nothing): its
    definitions whose structure (names erased, see :mod:`autograder.similarity`) is a companion
    function's or class's, the last public one named."""
    found: dict[str, tuple[str, float]] = {}
    for definition, name, score in companion_matches(code):
        found.setdefault(definition, (name, score))
    if not found:
        return ""

    def where(definition: str) -> int:  # the exercise's own definition usually comes last
        match = re.search(rf"^(?:async def|def|class) {re.escape(definition)}\b", code, re.M)
        return -match.start() if match else 0

    ranked = sorted(found.items(), key=lambda item: (item[0].startswith("_"), where(item[0])))
    (definition, (name, score)), rest = ranked[0], len(ranked) - 1
    more = f", and {rest} more of its definitions" if rest else ""
    return f"{name}'s source (its {definition}, similarity {score:.2f}{more})"


def _short(grade_id: str) -> str:
    return re.sub(r"^ch\d{2}_", "", grade_id)


def _num(value: float) -> str:
    return f"{value:g}"


# The feedback page's own words in each edition (the feedback lines come translated already).
_PAGE_WORDS = {
    "zh": {
        "Feedback": "反馈",
        "exercise": "练习",
        "points": "得分",
        "feedback": "反馈",
        "not graded": "未评分",
    }
}


def _word(result: GradeResult, word: str) -> str:
    return _PAGE_WORDS.get(result.language, {}).get(word, word)


def _table_html(result: GradeResult) -> str:
    esc = html.escape
    if not result.graded:
        return (
            f"<p><b>{esc(result.path)}</b>: {_word(result, 'not graded')}: "
            f"{esc(result.error or '')}</p>"
        )
    rows = "".join(
        f"<tr class='{esc(e.status)}'><td>{esc(e.name)}</td>"
        f"<td>{_num(e.points)} / {_num(e.max_points)}</td><td>{esc(e.feedback)}</td></tr>"
        for e in result.exercises
    )
    notes = "".join(f"<li>{esc(n)}</li>" for n in result.notes)
    if result.language == "zh":
        head = (
            f"章节 {esc(result.chapter or '')}，"
            f"得分 {_num(result.points)} / {_num(result.max_points)}"
        )
    else:
        head = (
            f"chapter {esc(result.chapter or '')}, "
            f"{_num(result.points)} / {_num(result.max_points)} points"
        )
    titles = "".join(f"<th>{_word(result, w)}</th>" for w in ("exercise", "points", "feedback"))
    return (
        f"<p><b>{esc(result.path)}</b>: {head}</p>"
        f"<table><thead><tr>{titles}</tr></thead>"
        f"<tbody>{rows}</tbody></table>" + (f"<ul>{notes}</ul>" if notes else "")
    )


def feedback_html(result: GradeResult, submission: dict | None = None) -> str:
    """A standalone HTML feedback page for the learner: the score table and their own code.

    Hidden tests never appear; review flags (meant for the instructor) are left out.

    Args:
        result: the grading result.
        submission: the submitted notebook (JSON data), to show the learner's solution cells.

    Returns:
        The HTML document as a string.
    """
    esc = html.escape
    title = _word(result, "Feedback")
    parts = [
        f"<!DOCTYPE html><html lang='{esc(result.language)}'><head><meta charset='utf-8'>",
        f"<title>{title}: {esc(Path(result.path).name)}</title>",
        "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3em .6em;"
        "text-align:left;vertical-align:top}tr.passed td:nth-child(2){color:#060}"
        "pre{background:#f6f6f6;padding:.6em;overflow-x:auto}</style></head><body>",
        f"<h1>{title}</h1>",
        _table_html(result),
    ]
    if submission is not None and result.graded:
        cells = {
            cell_grade_id(c): cell_source(c)
            for c in submission.get("cells", [])
            if is_solution_cell(c)
        }
        for exercise in result.exercises:
            code = cells.get(exercise.grade_id)
            if code is not None:
                parts.append(f"<h2>{esc(exercise.name)}</h2>")
                parts.append(f"<p>{esc(exercise.feedback)}</p><pre>{esc(code)}</pre>")
    parts.append("</body></html>\n")
    return "\n".join(parts)
