"""Grade many submissions: serially in this process, or in parallel worker processes.

Each worker process grades one submission at a time in its own kernel. The parent hands out work
over one pipe per worker, so a worker that hangs past ``submission_timeout`` (or dies) is killed and
replaced without disturbing the others, and its submission is reported as not graded. Results come
back in the order the paths were given, identical to serial grading.

Where the OS has CPU affinity (Linux), each worker and the kernels it starts run on their own share
of the cores. A notebook that sizes its threads from the cores it sees then uses its share, rather
than every core of the machine while another submission does the same: on 2 cores, two chapter 4
gradings side by side took 9-10 s each unpinned (a threads demonstration ran 30x slower, its
threads waiting for each other) and about 6.5 s each pinned, as fast as one alone.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from autograder.course import Course
from autograder.grader.grade import DEFAULT_TIMEOUT, GradeResult, grade_notebook
from autograder.grader.sandbox import Isolation, resolve

__all__ = ["default_jobs", "grade_paths", "skip_slow_imports"]


def default_jobs() -> int:
    """The number of CPU cores this process may use (the default for ``--jobs``)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def skip_slow_imports() -> None:
    """Skip jsonschema's optional IRI checker, whose import compiles a grammar for seconds.

    ``nbformat`` imports ``jsonschema``, which imports ``rfc3987_syntax`` when it is installed
    (about 4 s on a small machine); notebooks never use IRI formats, so the check is not needed.
    Call this at the start of a command-line process, before anything imports nbformat.
    """
    if "jsonschema" not in sys.modules:
        sys.modules.setdefault("rfc3987_syntax", None)


def grade_paths(
    paths: Sequence[str | os.PathLike],
    course: Course,
    *,
    jobs: int | None = None,
    chapter: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    fast: bool = True,
    submission_timeout: float | None = None,
    on_result: Callable[[GradeResult], None] | None = None,
    isolation: Isolation | str = "auto",
) -> list[GradeResult]:
    """Grade submissions, in parallel processes when ``jobs > 1``.

    Args:
        paths: the submissions.
        course: the course holding the source notebooks.
        jobs: worker processes; None for :func:`default_jobs`. 1 grades in this process.
        chapter: the chapter every submission must belong to (None: read it from each notebook).
        timeout: seconds each cell may run.
        fast: set ``COURSE_FAST=1`` in the kernels.
        submission_timeout: seconds a worker may spend on one submission before it is killed
            (parallel mode only); None for ``max(600, 20 * timeout)``.
        on_result: called with each result as soon as it is ready (in completion order).
        isolation: how learner code is confined: an
            :class:`autograder.grader.sandbox.Isolation`, or ``"sandbox"``, ``"none"`` or
            ``"auto"`` (see :func:`autograder.grader.sandbox.resolve`).

    Returns:
        One :class:`GradeResult` per path, in the order given.

    Raises:
        ValueError: if ``jobs`` or a timeout is not positive.
        SandboxUnavailable: ``isolation="sandbox"`` where the sandbox cannot run.

    Example:
        >>> results = grade_paths(["a.ipynb", "b.ipynb"], Course(Path("course")), jobs=2)  # doctest: +SKIP
    """
    jobs = default_jobs() if jobs is None else jobs
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive int, got {jobs!r}; use 1 to grade serially")
    if timeout <= 0:
        raise ValueError(f"timeout must be positive seconds, got {timeout!r}")
    paths = [str(p) for p in paths]
    if isinstance(isolation, str):
        isolation = resolve(isolation)
    options = {"chapter": chapter, "timeout": timeout, "fast": fast, "isolation": isolation}
    if jobs == 1 or len(paths) <= 1:
        results = []
        for path in paths:
            result = grade_notebook(path, course, **options)
            results.append(result)
            if on_result is not None:
                on_result(result)
        return results
    jobs = min(jobs, len(paths))
    options["threads"] = max(1, default_jobs() // jobs)  # where no affinity is set
    limit = submission_timeout if submission_timeout is not None else max(600.0, 20 * timeout)
    if limit <= 0:
        raise ValueError(f"submission_timeout must be positive seconds, got {limit!r}")
    return _parallel(paths, course, jobs, options, limit, on_result)


def _parallel(paths, course, jobs, options, limit, on_result) -> list[GradeResult]:
    from multiprocessing.connection import wait

    context = multiprocessing.get_context("spawn")
    pending = list(enumerate(paths))
    results: list[GradeResult | None] = [None] * len(paths)
    workers: list[_Worker] = []

    def finish(index: int, result: GradeResult) -> None:
        results[index] = result
        if on_result is not None:
            on_result(result)

    slots = core_slots(jobs)
    # the workers' temporary files go here, so a worker killed mid-grading leaves nothing behind
    scratch = tempfile.mkdtemp(prefix="autograder-pool-")
    try:
        while pending or any(w.task is not None for w in workers):
            workers = [w for w in workers if w.process.is_alive() or w.task is not None]
            while pending and sum(1 for w in workers if w.process.is_alive()) < jobs:
                held = {w.slot for w in workers if w.process.is_alive()}
                slot = min(set(range(jobs)) - held)
                cores = slots[slot] if slots is not None else None
                workers.append(_Worker(context, course.root, options, slot, cores, scratch))
            for worker in workers:
                if worker.task is None and pending and worker.process.is_alive():
                    worker.give(*pending.pop(0))
            busy = [w for w in workers if w.task is not None]
            ready = wait([w.conn for w in busy], timeout=0.5)
            for worker in busy:
                index, path = worker.task
                if worker.conn in ready:
                    try:
                        data = worker.conn.recv()
                    except (EOFError, OSError):
                        data = None
                    worker.task = None
                    if data is None:
                        worker.stop(kill=True)
                        finish(index, _failed(path, "the grading process crashed"))
                    else:
                        finish(index, GradeResult.from_dict(data))
                elif not worker.process.is_alive():
                    worker.task = None
                    finish(index, _failed(path, "the grading process crashed"))
                elif time.monotonic() - worker.started > limit:
                    worker.stop(kill=True)
                    worker.task = None
                    finish(
                        index,
                        _failed(
                            path,
                            f"grading took longer than {limit:g} s and was stopped; grade this "
                            "notebook alone to see which cell hangs",
                        ),
                    )
    finally:
        for worker in workers:
            worker.stop(kill=False)
        shutil.rmtree(scratch, ignore_errors=True)
    return [
        r if r is not None else _failed(p, "not graded")
        for r, p in zip(results, paths, strict=True)
    ]


def _failed(path: str, reason: str) -> GradeResult:
    return GradeResult(path=path, error=reason)


def core_slots(jobs: int) -> list[list[int]] | None:
    """The cores this process may use, dealt into ``jobs`` disjoint shares (as equal as they go).

    With more jobs than cores, shares repeat cores in turn. None where the OS has no affinity.

    Example:
        >>> core_slots(2)  # doctest: +SKIP
        [[0], [1]]
    """
    try:
        cores = sorted(os.sched_getaffinity(0))
    except AttributeError:
        return None
    if jobs >= len(cores):
        return [[cores[k % len(cores)]] for k in range(jobs)]
    return [cores[k * len(cores) // jobs : (k + 1) * len(cores) // jobs] for k in range(jobs)]


class _Worker:
    def __init__(self, context, course_root: Path, options: dict, slot: int, cores, scratch):
        self.conn, child = context.Pipe()
        if cores is not None:
            options = {**options, "threads": len(cores)}
        self.process = context.Process(
            target=_work, args=(child, str(course_root), options, cores, scratch), daemon=True
        )
        self.process.start()
        child.close()
        self.slot = slot
        self.task: tuple[int, str] | None = None
        self.started = 0.0

    def give(self, index: int, path: str) -> None:
        self.task = (index, path)
        self.started = time.monotonic()
        self.conn.send(path)

    def stop(self, *, kill: bool) -> None:
        if self.process.is_alive():
            if kill:
                self.process.kill()
            else:
                try:
                    self.conn.send(None)
                except OSError:
                    self.process.kill()
            self.process.join(timeout=5)
            if self.process.is_alive():
                self.process.kill()
                self.process.join(timeout=5)
        self.conn.close()


def _work(conn, course_root: str, options: dict, cores: list[int] | None, scratch: str) -> None:
    """Worker process: grade each path received until told to stop (None), on ``cores``."""
    if cores is not None:
        os.sched_setaffinity(0, cores)  # inherited by the kernels this worker starts
    tempfile.tempdir = scratch
    skip_slow_imports()
    course = Course(Path(course_root))
    while True:
        try:
            path = conn.recv()
        except (EOFError, OSError):
            return
        if path is None:
            return
        try:
            result = grade_notebook(path, course, **options)
        except Exception as exc:  # a grader bug must not take the batch down
            result = _failed(path, f"internal grader error: {type(exc).__name__}: {exc}")
        conn.send(result.to_dict())
