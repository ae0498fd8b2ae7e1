"""How much grading costs on top of running a notebook, and how well grading a class parallelises.

1. One chapter submission: plain execution (nbclient, same kernel environment) against
   ``autograder`` grading of the same notebook (a fresh kernel, restored hidden tests, per-test
   harness, the reference computed in the grader), in the bubblewrap sandbox and unconfined.
   Runs are interleaved and the medians reported. Target: grading adds at most 3 s.
2. A class of N submissions (default 20): graded serially, then with ``--jobs`` workers (default 2).
   Target: parallel time at most 0.6 x serial time on 2 cores.

Usage:
    python benchmarks/grading.py            # the full measurement (several minutes)
    python benchmarks/grading.py --quick    # one repeat, 4 submissions
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _plain_run(path: Path, env: dict[str, str], timeout: float) -> float:
    """Execute the notebook top to bottom with nbclient, as a learner's 'Run all' would."""
    from course import run_chapter  # benchmarks/course.py: one way to run a notebook

    return run_chapter(path, env, timeout)[0]


def _grade_once(path: Path, course, timeout: float, isolation: str = "auto") -> float:
    from autograder.grade import grade_notebook

    start = time.perf_counter()
    result = grade_notebook(path, course, timeout=timeout, isolation=isolation)
    elapsed = time.perf_counter() - start
    if not result.graded:
        raise SystemExit(f"grading failed: {result.error}")
    return elapsed


def overhead(course, chapter, repeats: int, timeout: float) -> dict[str, float]:
    """Median seconds of plain execution and of grading (sandboxed, unconfined)."""
    from autograder.sandbox import problem

    env = {"COURSE_FAST": "1", "MPLBACKEND": "Agg"}
    kinds = ["plain", "sandbox", "none"] if problem() is None else ["plain", "none"]
    times: dict[str, list[float]] = {kind: [] for kind in kinds}
    for index in range(repeats):
        # Interleave, rotating which goes first, so drift in machine load hits all alike.
        order = kinds[index % len(kinds) :] + kinds[: index % len(kinds)]
        for kind in order:
            if kind == "plain":
                times[kind].append(_plain_run(chapter.source, env, timeout))
            else:
                times[kind].append(_grade_once(chapter.source, course, timeout, kind))
            print(f"  run {index + 1} {kind:7s}: {times[kind][-1]:6.1f} s")
    return {kind: statistics.median(values) for kind, values in times.items()}


def class_batch(course, chapter, count: int, jobs: int, timeout: float) -> tuple[float, float]:
    """Seconds to grade ``count`` submissions serially, then with ``jobs`` processes."""
    from autograder.pool import grade_paths

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
    args = parser.parse_args(argv)
    if args.quick:
        args.repeats, args.submissions = 1, 4

    sys.path.insert(0, str(REPO))
    from autograder.course import Course
    from autograder.pool import skip_slow_imports

    skip_slow_imports()
    course = Course(REPO / "course")
    chapter = course.chapter(args.chapter)
    print(f"cores: {os.cpu_count()}, chapter: {chapter.name}")

    print("1. one submission: plain execution vs grading (COURSE_FAST=1)")
    medians = overhead(course, chapter, args.repeats, args.timeout)
    plain = medians.pop("plain")
    for kind, graded in medians.items():
        added = graded - plain
        verdict = "ok" if added <= 3 else "OVER TARGET"
        label = "in the sandbox" if kind == "sandbox" else "unconfined"
        print(
            f"   median plain {plain:.1f} s, graded {label} {graded:.1f} s: grading adds "
            f"{added:+.1f} s (target <= 3 s: {verdict})"
        )

    print(f"2. {args.submissions} submissions: serial vs --jobs {args.jobs}")
    serial, parallel = class_batch(course, chapter, args.submissions, args.jobs, args.timeout)
    ratio = parallel / serial
    verdict = "ok" if ratio <= 0.6 else "OVER TARGET"
    print(
        f"   serial {serial:.1f} s, parallel {parallel:.1f} s: ratio {ratio:.2f} "
        f"(target <= 0.6: {verdict})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
