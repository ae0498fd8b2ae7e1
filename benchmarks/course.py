"""How long every chapter takes, run as a learner runs it: quiet, and with the machine busy.

Each chapter's source notebook (the one with the solutions) is executed top to bottom in a fresh
kernel with default settings (no COURSE_FAST), once on a quiet machine and once while two other
CPU-bound processes run (a learner's browser, a video call). The table gives, per chapter, the
seconds of each run, the figures it draws, its exercises and points, and the budgets:

- each chapter <= 60 s quiet and <= 90 s loaded on a 2-core machine;
- the whole course <= 8 minutes quiet.

Usage:
    python benchmarks/course.py                       # every chapter, quiet and loaded
    python benchmarks/course.py --chapter 04 --threads 1 2   # compare CPU thread counts
    python benchmarks/course.py --quick               # fast mode, no loaded run (a smoke test)
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHAPTER_BUDGET_S, LOADED_BUDGET_S, COURSE_BUDGET_S = 60.0, 90.0, 8 * 60.0


def _busy(stop) -> None:
    """One CPU-bound stand-in for another program on the machine.

    It starts a session of its own, as a program a learner launches does: where Linux groups the
    scheduler's shares by session (autogroup, the default on desktops), the busy processes would
    otherwise share one group's share beside the notebook's kernel, which jupyter starts in a
    session of its own, and the kernel would keep a whole core to itself.
    """
    if hasattr(os, "setsid"):
        try:
            os.setsid()
        except OSError:
            pass
    x = 0
    while not stop.is_set():
        for _ in range(100_000):
            x = (x * 1103515245 + 12345) % 2**31


class _Load:
    """Two busy processes for the duration of a ``with`` block."""

    def __init__(self, processes: int):
        self.processes = processes
        self.stop = multiprocessing.Event()
        self.workers = []

    def __enter__(self):
        for _ in range(self.processes):
            worker = multiprocessing.Process(target=_busy, args=(self.stop,), daemon=True)
            worker.start()
            self.workers.append(worker)
        return self

    def busy_seconds(self) -> float | None:
        """CPU seconds the busy processes have used so far (Linux only; None elsewhere)."""
        total = 0.0
        try:
            for worker in self.workers:
                fields = Path(f"/proc/{worker.pid}/stat").read_text().rsplit(")", 1)[1].split()
                total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            return None
        return total

    def __exit__(self, *exc):
        self.stop.set()
        for worker in self.workers:
            worker.join(5)
            if worker.is_alive():
                worker.kill()


def run_chapter(path: Path, env: dict[str, str], timeout: float) -> tuple[float, int, list[str]]:
    """Execute a notebook; returns (seconds, figures drawn, errors raised by cells)."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    saved = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    try:
        with tempfile.TemporaryDirectory() as cwd:
            client = NotebookClient(
                nb,
                kernel_name="python3",
                timeout=int(timeout),
                allow_errors=True,
                shutdown_kernel="immediate",
                resources={"metadata": {"path": cwd}},
            )
            start = time.perf_counter()
            client.execute(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            seconds = time.perf_counter() - start
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    figures, errors = 0, []
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            if "image/png" in output.get("data", {}):
                figures += 1
            if output.get("output_type") == "error":
                errors.append(f"cell {index + 1}: {output.get('ename')}: {output.get('evalue')}")
    return seconds, figures, errors


def _exercises(path: Path) -> tuple[int, float]:
    from autograder.course import cell_points, is_solution_cell, is_test_cell, read_json_notebook

    cells = read_json_notebook(path)["cells"]
    return sum(map(is_solution_cell, cells)), sum(cell_points(c) for c in cells if is_test_cell(c))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chapter", action="append", help="only these chapters (name or number)")
    parser.add_argument(
        "--threads",
        nargs="+",
        type=int,
        metavar="N",
        help="run with COURSE_THREADS=N for each N (default: the chapters' own choice)",
    )
    parser.add_argument("--load", type=int, default=2, help="busy processes in the loaded run (2)")
    parser.add_argument("--quick", action="store_true", help="fast mode, quiet run only")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per cell (600)")
    args = parser.parse_args(argv)

    sys.path.insert(0, str(REPO))
    from autograder.course import Course
    from autograder.grader.pool import skip_slow_imports

    skip_slow_imports()
    course = Course(REPO / "course")
    chapters = course.chapters()
    if args.chapter:
        chapters = [course.chapter(key) for key in args.chapter]
    settings = [None] if not args.threads else args.threads
    base = {"COURSE_FAST": "1" if args.quick else "0"}  # the inline backend, as in JupyterLab
    print(_machine())
    print(f"cores: {os.cpu_count()}, load: {args.load} busy processes, fast mode: {args.quick}")
    header = f"{'chapter':24s} {'threads':>7s} {'quiet s':>8s} {'loaded s':>9s} {'figures':>7s}"
    print(header + f" {'exercises':>9s} {'points':>6s}  budget")
    totals: dict = {}
    busy_share: list[float] = []
    failed = False
    for chapter in chapters:
        exercises, points = _exercises(chapter.source)
        for threads in settings:
            env = dict(base)
            if threads is not None:
                env["COURSE_THREADS"] = str(threads)
            quiet, figures, errors = run_chapter(chapter.source, env, args.timeout)
            loaded = None
            if not args.quick and args.load:
                with _Load(args.load) as load:
                    before = load.busy_seconds()
                    loaded, _, _ = run_chapter(chapter.source, env, args.timeout)
                    after = load.busy_seconds()
                if before is not None and after is not None:
                    busy_share.append((after - before) / (loaded * args.load))
            totals[threads] = totals.get(threads, 0.0) + quiet
            ok = quiet <= CHAPTER_BUDGET_S and (loaded is None or loaded <= LOADED_BUDGET_S)
            failed |= not ok or bool(errors)
            shown = f"{loaded:9.1f}" if loaded is not None else f"{'-':>9s}"
            label = "default" if threads is None else str(threads)
            print(
                f"{chapter.name:24s} {label:>7s} {quiet:8.1f} {shown} {figures:7d} "
                f"{exercises:9d} {points:6g}  {'ok' if ok else 'OVER'}"
            )
            for error in errors:
                print(f"    error in {error[:150]}")
    for threads, total in totals.items():
        label = "default" if threads is None else f"{threads} threads"
        verdict = "ok" if total <= COURSE_BUDGET_S else "OVER"
        print(
            f"whole course ({label}): {total:.1f} s quiet (budget {COURSE_BUDGET_S:.0f} s: {verdict})"
        )
    if busy_share:
        # Proof that the loaded runs were loaded: each busy process's share of one core.
        print(
            f"busy processes during the loaded runs: {min(busy_share):.0%}-{max(busy_share):.0%}"
            " of a core each"
        )
    return 1 if failed else 0


def _machine() -> str:
    """The CPU, its vector extensions, torch's version, the date and the commit measured."""
    import platform

    import torch

    model, flags = platform.processor() or platform.machine(), set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name":
                model = value.strip()
            elif key.strip() == "flags":
                flags = set(value.split())
    except OSError:
        pass
    vector = "AVX-512 VNNI" if "avx512_vnni" in flags else "AVX2" if "avx2" in flags else "?"
    try:
        commit = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "?"
    return (
        f"machine: {model} ({vector}), torch {torch.__version__}, "
        f"{time.strftime('%Y-%m-%d')}, commit {commit}"
    )


if __name__ == "__main__":
    sys.exit(main())
