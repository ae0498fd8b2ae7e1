"""Check one exercise with its hidden tests, in seconds: ``autograder check`` and the lab's Check.

A check is a grading of one exercise (:func:`autograder.grader.grade.grade_submission` with
``exercise=``): the same merge with the source notebook, the same hidden tests, the same
two-process judgement and sandbox, and so the same points; only the cells that exercise needs
run (the setup, the cells it reads names from, its solution and its tests).

What is checked is the notebook as saved, with the code the learner last ran in their kernel laid
over it (``sources``: cell id to code, as the lab's kernel recorded it), so that Check answers
for the code in front of them without a save. Notes say where that differs from the saved file
(grading reads the file).

:class:`Checker` keeps a kernel started ahead for the chapter (:func:`start_warm`), which has
also run the notebook's first cells up to the first exercise while they are the course's own
(:func:`autograder.grader.grade.steps_ahead`), so a check in the lab only waits for the other
cells its exercise needs and the tests; :func:`serve` answers checks on standard input
(one JSON request per line), which is how the lab's kernel asks for them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import sys
import time
from pathlib import Path

from autograder.course import (
    Chapter,
    Course,
    CourseError,
    cell_grade_id,
    cell_source,
    is_solution_cell,
    is_test_cell,
    read_json_notebook,
)
from autograder.grader.execute import WarmKernel, start_warm
from autograder.grader.grade import (
    DEFAULT_TIMEOUT,
    grade_submission_async,
    kernel_settings,
    run_coroutine,
    steps_ahead,
)
from autograder.grader.sandbox import Isolation, resolve
from autograder.hints import best_clause, best_section, clauses, docstring, sections
from autograder.verdict import CheckResult

__all__ = ["Checker", "check_exercise", "check_exercise_async", "exercise_names", "serve"]

# A stub or a deleted cell: nothing written yet, so no clause is broken (no hints).
_NOT_WRITTEN = ("NotImplementedError", "your solution cell for")


def exercise_names(notebook: dict) -> dict[str, str]:
    """{every name a learner may call an exercise by: its grade_id}: the grade_id
    (``ch04_evaluate``), the short name (``evaluate``) and what its solution cell defines
    (``ResidualBlock``, ``save_checkpoint``)."""
    found: dict[str, str] = {}
    for cell in notebook.get("cells", []):
        grade_id = cell_grade_id(cell)
        if not grade_id or not is_solution_cell(cell):
            continue
        found[grade_id] = grade_id
        found.setdefault(re.sub(r"^ch\d{2}_", "", grade_id), grade_id)
        for match in re.finditer(r"^(?:def|class)\s+(\w+)", cell_source(cell), re.M):
            found.setdefault(match.group(1), grade_id)
    return found


def _overlay(
    notebook: dict, grade_id: str, sources: dict[str, str] | None, order: list[str] | None
) -> tuple[dict, list[str]]:
    """The notebook with the code last run in the kernel laid over it; notes on differences."""
    if sources is None:
        return notebook, []
    notebook = json.loads(json.dumps(notebook))
    cells = notebook["cells"]
    ids = {cell.get("id"): cell for cell in cells}
    notes = []
    solution = next((c for c in cells if cell_grade_id(c) == grade_id), None)
    for cell_id, code in sources.items():
        cell = ids.get(cell_id)
        if cell is None or cell.get("cell_type") != "code" or is_test_cell(cell):
            continue
        if cell is solution and cell_source(cell).strip() != code.strip():
            notes.append("saved_differs")
        cell["source"] = code
    if solution is not None and solution.get("id") not in sources:
        notes.append("not_run")
    extra = [i for i in (order or list(sources)) if i not in ids and sources.get(i, "").strip()]
    if extra:
        test_at = next(
            (i for i, c in enumerate(cells) if cell_grade_id(c) == f"{grade_id}_tests"), len(cells)
        )
        for offset, cell_id in enumerate(extra):
            cells.insert(
                test_at + offset,
                {
                    "cell_type": "code",
                    "id": cell_id,
                    "metadata": {},
                    "execution_count": None,
                    "outputs": [],
                    "source": sources[cell_id],
                },
            )
        notes.append(f"unsaved:{len(extra)}")
    return notebook, notes


_NOTES = {
    "en": {
        "saved_differs": "the code you ran for {name} is not saved yet: grading reads the saved "
        "notebook, so save it (Ctrl+S) before you submit",
        "not_run": "you have not run the cell of {name} in this kernel: the saved version was "
        "checked",
        "unsaved": "{count} cell(s) you ran are not in the saved notebook: they were checked as if "
        "they stood before the tests of {name}; save the notebook so that grading sees them",
    },
    "zh": {
        "saved_differs": "你为 {name} 运行的代码还没有保存：评分读取的是保存的笔记本，提交前请先保存（Ctrl+S）",
        "not_run": "你还没有在这个内核里运行 {name} 的单元：检查的是保存的版本",
        "unsaved": "你运行的 {count} 个单元不在保存的笔记本里：检查时把它们当作位于 {name} 的测试之前；"
        "请保存笔记本，评分才能看到它们",
    },
}


def _note(key: str, language: str, name: str) -> str:
    kind, _, count = key.partition(":")
    table = _NOTES.get(language, _NOTES["en"])
    return table[kind].format(name=name, count=count)


def _hints(chapter: Chapter, grade_id: str, failures: list[str]) -> list[dict]:
    """The clause and the section for each failing check (see :mod:`autograder.hints`).

    Read from the chapter as released in the learner's edition (the contract as written, even
    when the learner's cell no longer holds the docstring); only its docstrings and headings.
    """
    cells = chapter.read_source().get("cells", [])
    at = next((i for i, c in enumerate(cells) if cell_grade_id(c) == grade_id), len(cells))
    contract = clauses(docstring(cell_source(cells[at]))) if at < len(cells) else []
    chapter_sections = sections({"cells": cells}, before=at)
    found = []
    for failure in failures:
        clause = best_clause(failure, contract)
        section = best_section(failure + " " + (clause or ""), chapter_sections)
        found.append(
            {
                "clause": clause,
                "section": {"title": section.title, "anchor": section.anchor} if section else None,
            }
        )
    return found


async def check_exercise_async(
    path: str | Path,
    course: Course,
    exercise: str,
    *,
    sources: dict[str, str] | None = None,
    order: list[str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    isolation: Isolation | str = "auto",
    warm: WarmKernel | None = None,
) -> CheckResult:
    """:func:`check_exercise` in the caller's event loop (where ``warm`` was started)."""
    start = time.perf_counter()
    result = CheckResult(notebook=str(path), exercise=exercise, name=exercise)
    try:
        saved = read_json_notebook(Path(path))
        chapter = course.chapter_of(saved)
        result.chapter, result.language = chapter.name, chapter.language
        known = {**exercise_names(saved), **exercise_names(chapter.read_source())}
        grade_id = known.get(exercise)
        if grade_id is None:
            _missing(exercise, chapter, known)
        result.exercise, result.name = grade_id, re.sub(r"^ch\d{2}_", "", grade_id)
        notebook, notes = _overlay(saved, grade_id, sources, order)
        result.notes = [_note(n, chapter.language, result.name) for n in notes]
        result.cells = sum(1 for c in notebook["cells"] if c.get("cell_type") == "code")
        graded = await grade_submission_async(
            notebook,
            course,
            path=str(path),
            exercise=grade_id,
            timeout=timeout,
            isolation=isolation,
            warm=warm,
        )
        warm = None
        if graded.error is not None:
            raise CourseError(graded.error)
        outcome = graded.exercises[0]
        result.points, result.max_points, result.status = (
            outcome.points,
            outcome.max_points,
            outcome.status,
        )
        result.ran = graded.steps_run
        if outcome.status != "passed":
            result.failures = [part for part in outcome.feedback.split(" | ") if part.strip()]
            if outcome.status == "failed" and not outcome.feedback.startswith(_NOT_WRITTEN):
                result.hints = _hints(chapter, grade_id, result.failures)
    except CourseError as exc:
        result.error, result.status = str(exc), "error"
    finally:
        if warm is not None:
            await warm.close()
    result.seconds = round(time.perf_counter() - start, 2)
    return result


def _missing(exercise: str, chapter: Chapter, known: dict[str, str]) -> None:
    """Raise the error for an exercise the chapter lacks: another chapter's, or unknown.

    (An exercise whose cell the learner deleted is checked as grading grades it: its stub is
    put back, and the verdict says the cell is missing.)"""
    zh = chapter.language == "zh"
    match = re.match(r"^ch(\d{2})_", exercise)
    if match and match.group(1) != f"{chapter.number:02d}":
        raise CourseError(
            f"{exercise} 是第 {match.group(1)} 章的练习，而这本笔记本是第 {chapter.name} 章："
            "请在那一章的笔记本里检查它"
            if zh
            else f"{exercise} is an exercise of chapter {match.group(1)}, and this notebook is "
            f"chapter {chapter.name}: check it in that chapter's notebook"
        )
    names = sorted(set(known.values()))
    listed = ", ".join(re.sub(r"^ch\d{2}_", "", n) for n in names) or "none"
    raise CourseError(
        f"第 {chapter.name} 章没有练习 {exercise!r}（本章的练习：{listed}）"
        if zh
        else f"chapter {chapter.name} has no exercise {exercise!r} (its exercises: {listed})"
    )


def check_exercise(
    path: str | Path,
    course: Course,
    exercise: str,
    *,
    sources: dict[str, str] | None = None,
    order: list[str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    isolation: Isolation | str = "auto",
) -> CheckResult:
    """Check one exercise of a learner notebook with its hidden tests.

    Args:
        path: the learner's notebook (.ipynb), as saved.
        course: the course whose source notebooks hold the hidden tests.
        exercise: the exercise, by grade_id (``ch04_evaluate``), short name (``evaluate``) or
            the name its cell defines (``ResidualBlock``).
        sources: code last run in the learner's kernel, by cell id, laid over the saved cells.
        order: the cell ids of ``sources`` in the order they ran (cells the file lacks go before
            the exercise's tests in that order).
        timeout: seconds each cell may run (a hanging exercise is stopped and says so).
        isolation: as for :func:`autograder.grader.grade.grade_notebook`.

    Returns:
        A :class:`autograder.verdict.CheckResult`; a notebook that cannot be checked gives one
        with ``error`` set, it does not raise.

    Example:
        >>> result = check_exercise("notebooks/04-training-loop.ipynb", Course(Path("course")), "evaluate")  # doctest: +SKIP
        >>> result.points, result.failures  # doctest: +SKIP
    """
    return run_coroutine(
        check_exercise_async(
            path,
            course,
            exercise,
            sources=sources,
            order=order,
            timeout=timeout,
            isolation=isolation,
        )
    )


class Checker:
    """Answers checks of one lab, with a kernel for the chapter always started ahead.

    Args:
        course: the course. timeout, isolation: as for :func:`check_exercise`.
        run_ahead: let the kernel started ahead also run the notebook's first cells (see
            :meth:`prepare`); False only to measure what that saves.
    """

    def __init__(
        self,
        course: Course,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        isolation="auto",
        run_ahead: bool = True,
    ) -> None:
        self.course, self.timeout, self.run_ahead = course, timeout, run_ahead
        self.isolation = resolve(isolation) if isinstance(isolation, str) else isolation
        self._warm: asyncio.Task | None = None
        self._warm_for: str | None = None
        self._ahead: list = []

    def prepare(self, chapter: Chapter, notebook: dict | None = None) -> None:
        """Start a kernel for ``chapter`` in the background (replacing one for another).

        With ``notebook`` (the learner's, as last run), the kernel also runs its first cells, up
        to the first exercise, while they are the course's own code
        (:func:`autograder.grader.grade.steps_ahead`): every check of the chapter runs them
        first, so the next one starts after them. A check whose notebook no longer starts with
        those cells gets a fresh kernel.
        """
        ahead = steps_ahead(notebook, chapter) if notebook and self.run_ahead else []
        if self._warm_for == chapter.name and self._warm is not None and self._ahead == ahead:
            return
        self._drop()
        settings = kernel_settings(chapter)
        self._warm_for, self._ahead = chapter.name, ahead
        self._warm = asyncio.ensure_future(
            start_warm(timeout=self.timeout, isolation=self.isolation, ahead=ahead, **settings)
        )

    def _drop(self) -> None:
        task, self._warm, self._warm_for = self._warm, None, None
        if task is not None:
            task.add_done_callback(_close_unused)
            task.cancel() if not task.done() else None

    async def _take(self, chapter: Chapter) -> WarmKernel | None:
        if self._warm_for != chapter.name or self._warm is None:
            return None
        task, self._warm, self._warm_for = self._warm, None, None
        try:
            return await task
        except Exception:  # it could not start: the check starts its own and says why
            return None

    async def check(self, request: dict) -> CheckResult:
        """Check ``request["exercise"]`` of ``request["notebook"]`` (with its ``sources``)."""
        path = request.get("notebook", "")
        warm, saved = None, None
        try:
            saved = read_json_notebook(Path(path))
            chapter = self.course.chapter_of(saved)
            warm = await self._take(chapter)
        except CourseError:
            chapter = None
        result = await check_exercise_async(
            path,
            self.course,
            str(request.get("exercise", "")),
            sources=request.get("sources"),
            order=request.get("order"),
            timeout=self.timeout,
            isolation=self.isolation,
            warm=warm,
        )
        if chapter is not None:
            self.prepare(chapter, _as_run(saved, result.exercise, request))  # for the next check
        return result

    async def close(self) -> None:
        """Shut the kernel started ahead down."""
        task, self._warm, self._warm_for = self._warm, None, None
        if task is not None:
            if not task.done():
                task.cancel()
            with contextlib.suppress(BaseException):
                warm = await task
                await warm.close()


def _as_run(saved: dict, grade_id: str, request: dict) -> dict | None:
    """The notebook as the learner's kernel last ran it (None when the request cannot say)."""
    sources, order = request.get("sources"), request.get("order")
    try:
        return _overlay(saved, grade_id, sources, order if isinstance(order, list) else None)[0]
    except Exception:  # a malformed request was answered already; no cells run ahead then
        return None


def _close_unused(task: asyncio.Task) -> None:
    if task.cancelled() or task.exception() is not None:
        return
    asyncio.ensure_future(task.result().close())


async def serve(
    course: Course,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    isolation="auto",
    notebook: str | None = None,
) -> None:
    """Answer checks on standard input until it closes: one JSON request per line
    (``{"notebook", "exercise", "sources", "order"}``), one JSON :class:`CheckResult` per line
    on standard output. With ``notebook``, a kernel for its chapter starts at once."""
    checker = Checker(course, timeout=timeout, isolation=isolation)
    loop = asyncio.get_running_loop()
    if notebook:
        with contextlib.suppress(CourseError):
            saved = read_json_notebook(Path(notebook))
            checker.prepare(course.chapter_of(saved), saved)
    try:
        while True:
            line = await loop.run_in_executor(None, sys.stdin.readline)
            if not line:
                break
            if not line.strip():
                continue
            try:
                request = json.loads(line)
                if not isinstance(request, dict):
                    raise ValueError("a request is a JSON object")
            except ValueError as exc:
                reply = {"error": f"bad request: {exc}"}
            else:
                reply = (await checker.check(request)).to_dict()
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
    finally:
        await checker.close()
