"""Run `make test`'s stages in order, timing each, and print a table of the times at the end.

Usage: python3 .ci/stages.py NAME COMMAND [NAME COMMAND ...]

Each COMMAND runs in the shell, as a line of a Makefile recipe would. The first stage that fails
stops the run, as make would; the table (with that stage marked) is printed either way, and the
exit status is the failed stage's. Standard library only: it runs before the environment exists.
"""

from __future__ import annotations

import subprocess
import sys
import time


def main(argv: list[str]) -> int:
    if not argv or len(argv) % 2:
        print("usage: stages.py NAME COMMAND [NAME COMMAND ...]", file=sys.stderr)
        return 2
    stages = list(zip(argv[::2], argv[1::2]))
    rows: list[tuple[str, float, str]] = []
    status = 0
    started = time.monotonic()
    for name, command in stages:
        print(f"=== {name}: {command}", flush=True)
        begin = time.monotonic()
        try:
            status = subprocess.run(command, shell=True).returncode
        except KeyboardInterrupt:
            status = 130
        rows.append((name, time.monotonic() - begin, "ok" if status == 0 else f"FAILED ({status})"))
        if status != 0:
            break
    total = time.monotonic() - started
    skipped = [name for name, _ in stages[len(rows) :]]
    width = max(len(name) for name, _ in stages + [("total", "")])
    print(f"\nstage times ({'all passed' if status == 0 else 'stopped at a failure'}):")
    for name, seconds, verdict in rows:
        print(f"  {name:<{width}}  {_clock(seconds):>8}  {verdict}")
    for name in skipped:
        print(f"  {name:<{width}}  {'-':>8}  not run")
    print(f"  {'total':<{width}}  {_clock(total):>8}")
    return status


def _clock(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}:{rest:02d}"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
