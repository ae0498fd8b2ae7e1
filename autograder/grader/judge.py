"""The grader's side of a hidden test: the verdict, reached in the grader's own process.

The kernel sends back plain data (:mod:`autograder.transport`): whether the visible tests ran,
and what the learner's functions returned on every hidden input. Here the hidden test's source
(always the instructor's, never the submission's) is executed with
:func:`autograder.checks.hidden_test` collecting its ``check`` half, which recomputes the
reference with this process's own companion and compares. Learner code never runs here, so it can
neither see the reference's results nor change the verdict.
"""

from __future__ import annotations

import contextlib
import sys
from dataclasses import dataclass, field
from functools import lru_cache

from autograder import checks

__all__ = ["SEPARATOR", "Verdict", "judge"]

_MAX_FLAGS = 8
_MAX_FAILURES = 4
# Between the failures of one test cell in Verdict.evalue (the grader shows them as " | ").
SEPARATOR = "\x1e"


@dataclass
class Verdict:
    """Whether a test cell passed; on failure the error's name and message (the feedback).

    When several independent checks fail, ``evalue`` lists each distinct failure, the first one
    under ``ename`` and each later one as ``"Name: message"`` when its name differs, separated
    by :data:`SEPARATOR`.
    """

    passed: bool
    ename: str = ""
    evalue: str = ""
    flags: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Spec:
    check: object
    seeds: tuple


def judge(grade_id: str, hidden: str, data: dict) -> Verdict:
    """Decide a test cell from the kernel's results.

    Args:
        grade_id: the test cell's grade_id (for messages).
        hidden: the source of its hidden-test region, from the instructor's notebook.
        data: what the kernel wrote (see :func:`autograder.kernel.harness.run_test`).

    Returns:
        A :class:`Verdict`. A visible test that failed fails with that error; otherwise every
        hidden input is checked, and each distinct failure (a learner function that raised, a
        difference a check found) is listed.
    """
    flags = [str(f)[:200] for f in _list(data.get("flags"))[:_MAX_FLAGS]]
    threads = [str(t)[:60] for t in _list(data.get("threads"))[:_MAX_FLAGS]]
    if threads:
        flags.append(f"background threads ran during the tests: {', '.join(threads)}")
    visible = _pair(data.get("visible"))
    if visible:
        return Verdict(False, *visible, flags=flags)
    hidden_error = _pair(data.get("hidden_error"))
    if hidden_error:
        return Verdict(False, *hidden_error, flags=flags)
    if not hidden.strip():
        return Verdict(True, flags=flags)
    try:
        spec = _collect(grade_id, hidden)
    except Exception as exc:  # a broken hidden test is the course's bug: verify reports it
        return Verdict(
            False, "GradingError", f"the hidden tests could not be prepared ({exc})", flags=flags
        )
    probe = data.get("probe")
    entries = _list(probe)
    seeds = [e.get("seed") if isinstance(e, dict) else None for e in entries]
    if probe is None or seeds != list(spec.seeds):
        flags.append("the hidden tests' results do not match the inputs the grader sent")
        return Verdict(
            False, "TamperingSuspected", "the hidden tests' results were altered", flags=flags
        )
    failures: list[tuple[str, str]] = []
    for entry, seed in zip(entries, spec.seeds, strict=True):
        error = _pair(entry.get("error"))
        if error:
            _add(failures, error)
            continue
        try:
            with _quiet_torch():
                messages = checks.run_check(spec.check, entry.get("data"), seed)
        except Exception as exc:  # the result has a shape the check cannot even read
            messages = []
            _add(
                failures,
                (
                    type(exc).__name__,
                    f"your result could not be compared with the reference ({exc})",
                ),
            )
        for message in messages:
            _add(failures, ("AssertionError", message))
    if not failures:
        return Verdict(True, flags=flags)
    ename = failures[0][0]
    parts = [failures[0][1]] + [m if n == ename else f"{n}: {m}" for n, m in failures[1:]]
    return Verdict(False, ename, SEPARATOR.join(parts), flags=flags)


def _add(failures: list, failure: tuple[str, str]) -> None:
    if failure not in failures and len(failures) < _MAX_FAILURES:
        failures.append(failure)


@lru_cache(maxsize=64)
def _collect(grade_id: str, hidden: str) -> _Spec:
    """Execute the hidden source here and keep its ``check`` half and seeds."""
    found = []
    previous = checks._COLLECT
    checks._COLLECT = lambda run, check, seeds, block: found.append(_Spec(check, seeds))
    try:
        code = compile(hidden, f"<hidden tests {grade_id}>", "exec")
        exec(code, {"__name__": f"autograder.hidden.{grade_id}"})
    finally:
        checks._COLLECT = previous
    if len(found) != 1:
        raise ValueError(
            f"the hidden tests of {grade_id} call autograder.checks.hidden_test {len(found)} "
            "times; they must call it exactly once"
        )
    return found[0]


@contextlib.contextmanager
def _quiet_torch():
    """One thread and an untouched global random generator while a check computes references."""
    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.random.fork_rng(devices=[]):
            yield
    finally:
        torch.set_num_threads(threads)


def _list(value) -> list:
    return list(value) if isinstance(value, (list, tuple)) else []


def _pair(value) -> tuple[str, str] | None:
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return str(value[0])[:80], str(value[1])[:2000]
    return None
