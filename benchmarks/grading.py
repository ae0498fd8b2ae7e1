"""How much grading costs on top of running a notebook, and how well grading a class parallelises.

1. One chapter submission: plain execution (nbclient, same kernel environment) against
   ``autograder`` grading of the same notebook (a fresh kernel, restored hidden tests, per-test
   harness, the reference computed in the grader), in the bubblewrap sandbox and unconfined.
   Runs are interleaved and the medians reported, in wall seconds and in CPU seconds (this
   process and its kernels: a figure that other programs on a busy machine change far less).
   A sandboxed kernel is not this process's child once bwrap is killed, so its CPU seconds are
   not counted: compare plain and unconfined for those. Target: grading adds at most 1 s.
2. A class of N submissions (default 20): graded serially, then with ``--jobs`` workers (default 2).
   Target: parallel time at most 0.6 x serial time on 2 cores.
3. Throughput: a class of ``--class-size`` chapter-4 notebooks (default 50) graded in the sandbox
   with one job per core, reported as submissions per core-minute (wall minutes x cores used).
4. The class report (``autograder report``) for ``--report-size`` synthetic results (default 500):
   marks and notebooks made from the submission corpus (so the copying check has code to
   compare), report built and written; seconds, and results per second.

Usage:
    python benchmarks/grading.py            # the full measurement (several minutes)
    python benchmarks/grading.py --quick    # one repeat, 4 submissions
    python benchmarks/grading.py --only throughput,report    # parts 3 and 4 only
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _cpu() -> float:
    """CPU seconds of this process and of its children that have exited (the kernels)."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _plain_run(path: Path, env: dict[str, str], timeout: float) -> tuple[float, float]:
    """Execute the notebook top to bottom with nbclient, as a learner's 'Run all' would."""
    from course import run_chapter  # benchmarks/course.py: one way to run a notebook

    cpu = _cpu()
    return run_chapter(path, env, timeout)[0], _cpu() - cpu


def _grade_once(path: Path, course, timeout: float, isolation: str = "auto") -> tuple[float, float]:
    from autograder.grader.grade import grade_notebook

    start, cpu = time.perf_counter(), _cpu()
    result = grade_notebook(path, course, timeout=timeout, isolation=isolation)
    elapsed = time.perf_counter() - start
    if not result.graded:
        raise SystemExit(f"grading failed: {result.error}")
    return elapsed, (_cpu() - cpu if isolation == "none" else float("nan"))


def overhead(course, chapter, repeats: int, timeout: float) -> dict[str, tuple[float, float]]:
    """Median (wall, CPU) seconds of plain execution and of grading (sandboxed, unconfined)."""
    from autograder.grader.sandbox import problem, resolve

    env = {"COURSE_FAST": "1", "MPLBACKEND": "Agg"}
    kinds = ["plain", "sandbox", "none"] if problem() is None else ["plain", "none"]
    resolve("sandbox" if "sandbox" in kinds else "none")  # its one-off start check, not timed
    times: dict[str, list[tuple[float, float]]] = {kind: [] for kind in kinds}
    for index in range(repeats):
        # Interleave, rotating which goes first, so drift in machine load hits all alike.
        order = kinds[index % len(kinds) :] + kinds[: index % len(kinds)]
        for kind in order:
            if kind == "plain":
                times[kind].append(_plain_run(chapter.source, env, timeout))
            else:
                times[kind].append(_grade_once(chapter.source, course, timeout, kind))
            wall, cpu = times[kind][-1]
            print(
                f"  run {index + 1} {kind:7s}: {wall:6.1f} s, {cpu:6.1f} CPU s"
            )  # nan: not counted
    return {
        kind: (statistics.median(v[0] for v in values), statistics.median(v[1] for v in values))
        for kind, values in times.items()
    }


def class_batch(course, chapter, count: int, jobs: int, timeout: float) -> tuple[float, float]:
    """Seconds to grade ``count`` submissions serially, then with ``jobs`` processes."""
    from autograder.grader.pool import grade_paths

    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for index in range(count):
            path = Path(folder) / f"learner{index:02d}" / chapter.released_name
            path.parent.mkdir()
            shutil.copy(chapter.source, path)
            paths.append(path)
        timings = {}
        for mode in ("serial", "parallel"):
            start = time.perf_counter()
            results = grade_paths(
                paths, course, jobs=1 if mode == "serial" else jobs, timeout=timeout
            )
            timings[mode] = time.perf_counter() - start
            bad = [r for r in results if not r.graded or r.points != r.max_points]
            if bad:
                raise SystemExit(f"{mode} grading went wrong: {bad[0]}")
            print(f"  {mode:8s}: {timings[mode]:6.1f} s for {count} submissions")
    return timings["serial"], timings["parallel"]


def throughput(course, chapter, count: int, timeout: float) -> float:
    """Submissions per core-minute for ``count`` copies of the chapter, sandboxed, one job a core."""
    from autograder.grader.pool import default_jobs, grade_paths

    jobs = default_jobs()
    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for index in range(count):
            path = Path(folder) / f"learner{index:03d}" / chapter.released_name
            path.parent.mkdir()
            shutil.copy(chapter.source, path)
            paths.append(path)
        start = time.perf_counter()
        results = grade_paths(paths, course, jobs=jobs, timeout=timeout, isolation="sandbox")
        elapsed = time.perf_counter() - start
    bad = [r for r in results if not r.graded]
    if bad:
        raise SystemExit(f"grading went wrong: {bad[0]}")
    rate = count / (elapsed / 60 * jobs)
    print(
        f"   {count} submissions in {elapsed:.1f} s on {jobs} cores: {rate:.2f} submissions per "
        "core-minute"
    )
    return rate


def report_time(count: int) -> float:
    """Seconds to build and write the class report for ``count`` synthetic results."""
    import json
    import random

    from autograder.marks import combine, read_marks
    from autograder.report import build_report, write_report

    sys.path.insert(0, str(REPO))
    from tests.course.corpus import ROOT, parse

    files = sorted((ROOT / "04").glob("*.py"))
    corpus = [parse(f) for f in files]
    base = next(s for s in corpus if s.name == "_base").exercises
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as folder:
        submissions = []
        for index in range(count):
            learner = f"learner{index:03d}"
            chosen = rng.choice(corpus)
            answers = {gid: b.code for gid, b in base.items()}
            answers.update({gid: b.code for gid, b in chosen.exercises.items()})
            cells = [
                {
                    "cell_type": "code",
                    "metadata": {"nbgrader": {"solution": True, "grade": False, "grade_id": gid}},
                    "source": code,
                    "outputs": [],
                    "execution_count": None,
                }
                for gid, code in answers.items()
            ]
            path = Path(folder) / learner / "04-training-loop.ipynb"
            path.parent.mkdir()
            nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}
            path.write_text(json.dumps(nb))
            exercises = []
            for gid, block in base.items():
                mine = chosen.exercises.get(gid, block)
                points = 3.0 if mine.points is None else float(mine.points)
                exercises.append(
                    {
                        "grade_id": gid,
                        "name": gid[5:],
                        "points": points,
                        "max_points": 3.0,
                        "status": "passed" if points == 3 else "failed",
                        "feedback": "passed"
                        if points == 3
                        else f"AssertionError: {mine.feedback} (got {rng.random():.3f})",
                    }
                )
            submissions.append(
                {
                    "path": str(path),
                    "chapter": "04-training-loop",
                    "graded": True,
                    "error": None,
                    "points": sum(e["points"] for e in exercises),
                    "max_points": 3.0 * len(exercises),
                    "exercises": exercises,
                    "flags": [f"planted: {chosen.name}"] if chosen.review else [],
                    "learner": learner,
                    "progress": {
                        e["name"]: {"hints": rng.randint(0, 2), "checks": 2} for e in exercises
                    },
                }
            )
        marks = Path(folder) / "marks.json"
        document = {
            "format": 2,
            "course_versions": {"04-training-loop": "x"},
            "submissions": submissions,
        }
        marks.write_text(json.dumps(document))
        start = time.perf_counter()
        found, versions, notes = combine([read_marks(marks)])
        report = build_report(found, versions=versions, notes=notes)
        write_report(report, Path(folder) / "report")
        elapsed = time.perf_counter() - start
    print(
        f"   report for {count} results: {elapsed:.1f} s ({count / elapsed:.0f} results/s; "
        f"{len(report['copies'])} similar pairs among corpus-drawn answers)"
    )
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="1 repeat and 4 submissions")
    parser.add_argument("--chapter", default="04-training-loop", help="default: 04-training-loop")
    parser.add_argument("--repeats", type=int, default=3, help="overhead runs of each (default 3)")
    parser.add_argument("--submissions", type=int, default=20, help="class size (default 20)")
    parser.add_argument("--jobs", type=int, default=2, help="parallel processes (default 2)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per cell (120)")
    parser.add_argument("--class-size", type=int, default=50, help="part 3's class (50)")
    parser.add_argument("--report-size", type=int, default=500, help="part 4's results (500)")
    parser.add_argument(
        "--only",
        default="overhead,parallel,throughput,report",
        help="parts to run, comma-separated (default: all four)",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.repeats, args.submissions, args.class_size = 1, 4, 4
    parts = set(args.only.split(","))

    sys.path.insert(0, str(REPO))
    from autograder.course import Course
    from autograder.grader.pool import skip_slow_imports

    skip_slow_imports()
    course = Course(REPO / "course")
    chapter = course.chapter(args.chapter)
    print(f"cores: {os.cpu_count()}, chapter: {chapter.name}")

    if "report" in parts and parts == {"report"}:
        print(f"4. the class report for {args.report_size} synthetic results")
        report_time(args.report_size)
        return 0
    if "overhead" in parts:
        _overhead_part(course, chapter, args)
    if "parallel" in parts:
        _parallel_part(course, chapter, args)
    if "throughput" in parts:
        print(f"3. throughput: {args.class_size} {chapter.name} submissions, sandboxed")
        throughput(course, chapter, args.class_size, args.timeout)
    if "report" in parts:
        print(f"4. the class report for {args.report_size} synthetic results")
        report_time(args.report_size)
    return 0


def _overhead_part(course, chapter, args) -> None:
    print("1. one submission: plain execution vs grading (COURSE_FAST=1)")
    medians = overhead(course, chapter, args.repeats, args.timeout)
    plain, plain_cpu = medians.pop("plain")
    for kind, (graded, graded_cpu) in medians.items():
        added = graded - plain
        verdict = "ok" if added <= 1 else "OVER TARGET"
        label = "in the sandbox" if kind == "sandbox" else "unconfined"
        print(
            f"   median plain {plain:.1f} s, graded {label} {graded:.1f} s: grading adds "
            f"{added:+.1f} s (target <= 1 s: {verdict})"
            + (
                f"; CPU {plain_cpu:.1f} -> {graded_cpu:.1f} s ({graded_cpu - plain_cpu:+.1f} s)"
                if graded_cpu == graded_cpu
                else ""
            )
        )


def _parallel_part(course, chapter, args) -> None:
    print(f"2. {args.submissions} submissions: serial vs --jobs {args.jobs}")
    serial, parallel = class_batch(course, chapter, args.submissions, args.jobs, args.timeout)
    ratio = parallel / serial
    verdict = "ok" if ratio <= 0.6 else "OVER TARGET"
    print(
        f"   serial {serial:.1f} s, parallel {parallel:.1f} s: ratio {ratio:.2f} "
        f"(target <= 0.6: {verdict})"
    )


if __name__ == "__main__":
    sys.exit(main())
