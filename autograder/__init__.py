"""The course's autograder: release learner notebooks, grade submissions, verify chapters.

Command line: ``python -m autograder {release,grade,merge,report,export,verify,book,...}``. This package stays light to
import (the learner's kernel imports :mod:`autograder.checks`); the public names below load on
first use.

Trust boundary: the package's layout draws it (tests/autograder/test_layout.py keeps it so):

- ``kernel/``, in the learner's kernel, where a submission runs and can tamper with anything:
  ``harness``. It imports nothing of ``grader/``, only the two straddling modules below.
- ``grader/``, in the grader's process, which learner code never reaches and which alone decides
  a grade: ``judge``, ``grade``, ``execute``, ``pool``, ``sandbox``, ``confine``, and ``check``
  with ``deps`` (one exercise graded alone, on the cells it needs) and ``service`` (the same
  over HTTP, for a class). It imports
  nothing of ``kernel/`` (it names the harness only in the code it sends to the kernel).
- top level, straddling the boundary on purpose, the only modules both sides use: ``checks``
  and ``transport``.
- top level, course tools, never near a running submission: ``__main__``, ``course``,
  ``release``, ``lab``, ``verify``, ``book``, ``i18n``; the class's marks after grading,
  ``marks`` (marks files, shards, merge), ``report``, ``similarity`` (which parses learners'
  code, never runs it) and ``gradebook`` (CSV, nbgrader); and the learner's own lab tools, which run in the
  learner's kernel but decide nothing (the verdict comes from a checking process): ``inlab``,
  ``progress``, ``verdict``, ``hints``.

``checks`` and ``transport`` straddle because each hidden test is written once (course notebooks
import ``autograder.checks``): its ``run`` half executes in the kernel and returns plain data,
its ``check`` half recomputes the reference in the grader; ``transport`` only carries that data
across (``dump`` in the kernel, ``load`` in the grader: ``torch.load(weights_only=True)`` or
JSON), so nothing the kernel writes can run in the grader. What runs beside a submission, and so
what it can tamper with, is ``kernel/``, these two modules and this light ``__init__``; the
sandbox shows the kernel the whole package read-only, but a copy of grader code imported there
decides nothing.
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
    "ExerciseResult": "autograder.grader.grade",
    "GradeResult": "autograder.grader.grade",
    "grade_notebook": "autograder.grader.grade",
    "grade_paths": "autograder.grader.pool",
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
