"""How long Check takes for one exercise, against grading the whole notebook.

For a chapter's notebook with correct answers (the submission corpus's ``_base.py`` laid over
the released notebook: the released one holds stubs, and a check should run real solutions),
measured side by side in this process:

1. the first check of the chapter, cold: it starts its own kernel, as the lab's first Check does;
2. each exercise checked through a warm :class:`autograder.grader.check.Checker`, as the lab
   checks: the kernel the Checker starts ahead has finished starting, and running the
   notebook's first cells up to the first exercise, before the check is timed (so the figure is
   the other cells the exercise needs, its tests and the judgement: what a learner waits for);
3. the same checks with a Checker that runs no cells ahead (``run_ahead=False``): the baseline;
4. grading the whole notebook (:func:`autograder.grader.grade.grade_notebook`), same settings.

Printed per exercise: seconds with cells run ahead and without, the cells run of the notebook's
code cells (those run ahead included), and the ratios; then the median and the maximum. Targets (a quiet 2-core machine): median check
at most 5 s, every exercise at most 15 s. Every check must give full marks (it is a correct
notebook): anything else is reported as a failure.

Usage:
    python benchmarks/check.py                    # chapter 04 (about a minute)
    python benchmarks/check.py --chapter all      # every chapter (10 to 15 minutes)
    python benchmarks/check.py --chapter 05 --repeats 3   # medians of 3 runs of each
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MEDIAN_TARGET_S, EACH_TARGET_S = 5.0, 15.0


def base_notebook(course, chapter, folder: Path) -> Path:
    """The chapter's released notebook with the corpus's correct answers, written in ``folder``."""
    from autograder.release import released_notebook
    from tests.course.corpus import BASE, build, submissions

    subs = submissions(chapter.name[:2])
    if not subs or subs[0].path.name != BASE:
        raise SystemExit(f"chapter {chapter.name} has no corpus {BASE}")
    notebook = build(json.loads(released_notebook(course, chapter)), subs[0], subs[0])
    path = folder / chapter.released_name
    path.write_text(json.dumps(notebook, indent=1), encoding="utf-8")
    return path


def exercises(chapter) -> list[str]:
    """The chapter's exercises (their solution cells' grade_ids), in notebook order."""
    from autograder.course import cell_grade_id, exercise_id, is_test_cell

    found = []
    for cell in chapter.read_source()["cells"]:
        gid = cell_grade_id(cell)
        if gid and gid.startswith(chapter.prefix) and is_test_cell(cell):
            if exercise_id(gid) not in found:
                found.append(exercise_id(gid))
    return found


async def _warm_ready(checker) -> float:
    """Wait until the kernel the Checker started ahead is up; the seconds waited."""
    start = time.perf_counter()
    task = checker._warm  # the kernel started ahead (Checker.prepare)
    if task is not None:
        await asyncio.wait({task})
    return time.perf_counter() - start


async def checks(
    course, path: Path, ids: list[str], timeout: float, failures: list, run_ahead: bool = True
) -> dict:
    """{"cold": (grade_id, seconds), "warm": {grade_id: (seconds, ran, cells)}, "start": s}."""
    from autograder.grader.check import Checker

    checker = Checker(course, timeout=timeout, run_ahead=run_ahead)
    out: dict = {"warm": {}, "start": []}

    async def one(grade_id: str):
        start = time.perf_counter()
        result = await checker.check({"notebook": str(path), "exercise": grade_id})
        seconds = time.perf_counter() - start
        if result.status != "passed" or result.points != result.max_points:
            failures.append(f"{grade_id}: {result.status}, {result.points}/{result.max_points}")
            failures.append(result.text())
        return seconds, result

    try:
        seconds, _ = await one(ids[0])  # nothing started ahead: the check starts its kernel
        out["cold"] = (ids[0], seconds)
        for grade_id in ids:
            out["start"].append(await _warm_ready(checker))
            seconds, result = await one(grade_id)
            out["warm"][grade_id] = (seconds, result.ran, result.cells)
    finally:
        await checker.close()
    return out


def whole(course, path: Path, timeout: float, failures: list) -> float:
    """Seconds to grade the whole notebook."""
    from autograder.grader.grade import grade_notebook

    start = time.perf_counter()
    result = grade_notebook(path, course, timeout=timeout)
    seconds = time.perf_counter() - start
    if not result.graded or result.points != result.max_points:
        failures.append(f"whole-notebook grading: {result.error or ''}\n{result}")
    return seconds


def measure(course, chapter, repeats: int, timeout: float) -> dict:
    """Median seconds over ``repeats`` runs (checks, then grading, each run)."""
    ids = exercises(chapter)
    failures: list = []
    runs, plain, grades = [], [], []
    with tempfile.TemporaryDirectory() as folder:
        path = base_notebook(course, chapter, Path(folder))
        for index in range(repeats):
            plain.append(asyncio.run(checks(course, path, ids, timeout, failures, False)))
            runs.append(asyncio.run(checks(course, path, ids, timeout, failures)))
            grades.append(whole(course, path, timeout, failures))
            print(
                f"  run {index + 1}: cold check {runs[-1]['cold'][1]:.1f} s, "
                f"whole notebook {grades[-1]:.1f} s"
            )
    warm = {
        g: (
            statistics.median(r["warm"][g][0] for r in runs),
            runs[-1]["warm"][g][1],
            runs[-1]["warm"][g][2],
            statistics.median(r["warm"][g][0] for r in plain),
        )
        for g in ids
    }
    return {
        "ids": ids,
        "warm": warm,
        "cold": (ids[0], statistics.median(r["cold"][1] for r in runs)),
        "start": statistics.median(s for r in runs for s in r["start"]),
        "whole": statistics.median(grades),
        "failures": failures,
    }


def report(chapter, figures: dict) -> tuple[list[float], bool]:
    """Print one chapter's table; (its warm check seconds, whether it met the targets)."""
    whole_s = figures["whole"]
    width = max(len(g) for g in figures["ids"])
    print(f"  {'exercise':<{width}}  check s  nothing ahead s  cells run  whole/check  ahead gain")
    seconds = []
    for grade_id in figures["ids"]:
        s, ran, cells, base = figures["warm"][grade_id]
        seconds.append(s)
        print(
            f"  {grade_id:<{width}}  {s:7.2f}  {base:15.2f}  {ran:3d} of {cells:<3d}  "
            f"{whole_s / s:11.1f}  {base / s:9.2f}x"
        )
    median, worst = statistics.median(seconds), max(seconds)
    cold_id, cold = figures["cold"]
    ok = median <= MEDIAN_TARGET_S and worst <= EACH_TARGET_S and not figures["failures"]
    print(
        f"  chapter {chapter.name}: median check {median:.2f} s (target <= {MEDIAN_TARGET_S:g}), "
        f"max {worst:.2f} s (target <= {EACH_TARGET_S:g}); whole notebook {whole_s:.1f} s = "
        f"{whole_s / median:.1f} x the median check; cold first check ({cold_id}) {cold:.1f} s; "
        f"a warm kernel took {figures['start']:.1f} s more to be ready after a check: "
        + ("ok" if ok else "OVER TARGET" if not figures["failures"] else "FAILED")
    )
    for failure in figures["failures"]:
        print("   " + failure.replace("\n", "\n   "))
    return seconds, ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--chapter", default="04", help="a chapter (name or number), or 'all' (default: 04)"
    )
    parser.add_argument("--repeats", type=int, default=1, help="runs of each; medians (default 1)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per cell (300)")
    args = parser.parse_args(argv)

    sys.path.insert(0, str(REPO))
    from autograder.course import Course
    from autograder.grader.pool import skip_slow_imports

    skip_slow_imports()
    course = Course(REPO / "course")
    chapters = course.chapters() if args.chapter == "all" else [course.chapter(args.chapter)]
    print(f"cores: {os.cpu_count()}, chapters: {', '.join(c.name for c in chapters)}")
    everything, all_ok = [], True
    for chapter in chapters:
        print(f"chapter {chapter.name}:")
        seconds, ok = report(chapter, measure(course, chapter, args.repeats, args.timeout))
        everything += seconds
        all_ok &= ok
    if len(chapters) > 1:
        median, worst = statistics.median(everything), max(everything)
        print(
            f"all {len(everything)} exercises: median check {median:.2f} s "
            f"(target <= {MEDIAN_TARGET_S:g}), max {worst:.2f} s (target <= {EACH_TARGET_S:g})"
        )
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
