"""The course's autograder: release learner notebooks, grade submissions, verify chapters.

Command line: ``python -m autograder {release,grade,verify}``. This package stays light to import
(the learner's kernel imports :mod:`autograder.checks`); the public names below load on first use.
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
