"""The course's autograder: release learner notebooks, grade submissions, verify chapters.

Command line: ``python -m autograder {release,grade,verify,book}``. This package stays light to
import (the learner's kernel imports :mod:`autograder.checks`); the public names below load on
first use.

Trust boundary (a test keeps it complete, and keeps the kernel side from importing the grader's):

- in the learner's kernel, where a submission runs and can tamper with anything: _harness,
  transport (dump), checks (the ``run`` halves of hidden tests)
- in the grader's process, which learner code never reaches and which alone decides a grade:
  judge, grade, execute, pool, sandbox, confine, transport (load), checks (the ``check`` halves)
- course tools, never near a submission: __main__, course, release, lab, verify, book

``checks`` and ``transport`` straddle the boundary on purpose: each hidden test is written once,
its ``run`` half executes in the kernel and returns plain data, its ``check`` half recomputes the
reference in the grader; ``transport`` only carries data across (``torch.load(weights_only=True)``
or JSON), so nothing the kernel writes can run in the grader.
"""

from __future__ import annotations

import importlib

__all__ = [
    "Course",
    "ExerciseResult",
    "GradeResult",
    "ReleaseReport",
    "VerifyReport",
    "grade_notebook",
    "grade_paths",
    "release",
    "verify",
]

_HOME = {
    "Course": "autograder.course",
    "ExerciseResult": "autograder.grade",
    "GradeResult": "autograder.grade",
    "grade_notebook": "autograder.grade",
    "grade_paths": "autograder.pool",
    "ReleaseReport": "autograder.release",
    "release": "autograder.release",
    "VerifyReport": "autograder.verify",
    "verify": "autograder.verify",
}


def __getattr__(name: str):
    if name in _HOME:
        return getattr(importlib.import_module(_HOME[name]), name)
    raise AttributeError(f"module 'autograder' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
