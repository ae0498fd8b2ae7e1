"""A tiny course for testing the autograder without any real chapter.

Chapter ``01-demo`` has three exercises (add: 2 points, mean: 3, scale: 1) whose hidden tests use
``autograder.checks.hidden_test`` on two inputs each; the reference for ``mean`` is
``statistics.fmean``, blocked while the learner's half runs. Chapter ``02-extra`` has one
exercise. No torch, so kernels start fast and results cross as JSON.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[2]
POINTS = {"ch01_add": 2, "ch01_mean": 3, "ch01_scale": 1}

SETUP = """\
import os
import statistics

FAST = os.environ.get("COURSE_FAST") == "1"
"""

ADD = '''\
def add(a: float, b: float) -> float:
    """Return the sum of a and b."""
    ### BEGIN SOLUTION
    # CANARY ch01_add
    return a + b
    ### END SOLUTION
'''

ADD_TESTS = """\
# Checks the form of add (visible) and its result on two cases (hidden).
assert isinstance(add(1.0, 2.0), float), "add must return a float"
### BEGIN HIDDEN TESTS
# CANARY ch01_add_hidden
from autograder.checks import close, hidden_test

_ADD_CASES = {0: (2.0, 3.5), 1: (-1.0, 1.25)}


def _run(seed):
    return add(*_ADD_CASES[seed])


def _check(got, seed):
    a, b = _ADD_CASES[seed]
    close(got, a + b, f"add({a}, {b}) is wrong: are both arguments added?")


hidden_test(_run, _check, seeds=(0, 1))
### END HIDDEN TESTS
"""

MEAN = '''\
def mean(values: list[float]) -> float:
    """The arithmetic mean of values."""
    ### BEGIN SOLUTION
    # CANARY ch01_mean
    running_total = 0.0
    for value in values:
        running_total += value
    return running_total / len(values)
    ### END SOLUTION
'''

MEAN_TESTS = """\
# Checks the form of mean (visible) and its result against statistics.fmean (hidden).
assert callable(mean), "mean must be a function"
### BEGIN HIDDEN TESTS
# CANARY ch01_mean_hidden
import statistics
from autograder.checks import close, hidden_test

_MEAN_SAMPLES = {0: [1.0, 2.0, 4.5], 1: [3.0, -1.0, 0.5, 8.0]}


def _run(seed):
    return mean(list(_MEAN_SAMPLES[seed]))


def _check(got, seed):
    expected_mean = statistics.fmean(_MEAN_SAMPLES[seed])
    close(got, expected_mean, "mean() differs from the reference: is the total divided by the count?")


hidden_test(_run, _check, seeds=(0, 1), block=["statistics:fmean"])
### END HIDDEN TESTS
"""

SCALE = '''\
def scale(values: list[float], factor: float) -> list[float]:
    """Each value multiplied by factor."""
    ### BEGIN SOLUTION
    # CANARY ch01_scale
    return [value * factor for value in values]
    ### END SOLUTION
'''

SCALE_TESTS = """\
# Checks scale on one list (hidden).
### BEGIN HIDDEN TESTS
# CANARY ch01_scale_hidden
from autograder.checks import close, hidden_test


def _run(seed):
    return scale([1.0, 2.0, float(seed)], 3.0 + seed)


def _check(got, seed):
    factor = 3.0 + seed
    close(got, [1.0 * factor, 2.0 * factor, seed * factor], "scale() is wrong: multiply every value")


hidden_test(_run, _check, seeds=(0, 1))
### END HIDDEN TESTS
"""

DOUBLE = '''\
def double(x: int) -> int:
    """Twice x."""
    ### BEGIN SOLUTION
    # CANARY ch02_double
    return x * 2
    ### END SOLUTION
'''

DOUBLE_TESTS = """\
# Checks double (hidden).
### BEGIN HIDDEN TESTS
# CANARY ch02_double_hidden
from autograder.checks import close, hidden_test


def _run(seed):
    return double(seed)


def _check(got, seed):
    close(got, 2 * seed, "double() is wrong")


hidden_test(_run, _check, seeds=(21, 5))
### END HIDDEN TESTS
"""


def _meta(grade_id: str, *, solution: bool, points: int = 0) -> dict:
    meta = {
        "grade": not solution,
        "solution": solution,
        "locked": not solution,
        "grade_id": grade_id,
        "schema_version": 3,
        "task": False,
    }
    if not solution:
        meta["points"] = points
    return {"nbgrader": meta}


def _notebook(cells: list) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
        "name": "python3",
    }
    nb.metadata["language_info"] = {"name": "python"}
    for index, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{index}"
    return nb


def _exercise(number: int, grade_id: str, points: int, solution: str, tests: str) -> list:
    name = grade_id.split("_", 1)[1]
    unit = "point" if points == 1 else "points"
    return [
        nbformat.v4.new_markdown_cell(f"### Exercise {number} — {name} ({points} {unit})"),
        nbformat.v4.new_code_cell(solution, metadata=_meta(grade_id, solution=True)),
        nbformat.v4.new_code_cell(
            tests, metadata=_meta(f"{grade_id}_tests", solution=False, points=points)
        ),
    ]


def demo_notebook() -> nbformat.NotebookNode:
    cells = [
        nbformat.v4.new_markdown_cell("# Chapter 1: a demo\nThree tiny exercises."),
        nbformat.v4.new_code_cell(SETUP),
        *_exercise(1, "ch01_add", 2, ADD, ADD_TESTS),
        *_exercise(2, "ch01_mean", 3, MEAN, MEAN_TESTS),
        *_exercise(3, "ch01_scale", 1, SCALE, SCALE_TESTS),
        nbformat.v4.new_markdown_cell("That is all."),
        nbformat.v4.new_code_cell("print('done', FAST)"),
    ]
    return _notebook(cells)


def extra_notebook() -> nbformat.NotebookNode:
    cells = [
        nbformat.v4.new_markdown_cell("# Chapter 2: extra"),
        nbformat.v4.new_code_cell("import os"),
        *_exercise(1, "ch02_double", 1, DOUBLE, DOUBLE_TESTS),
    ]
    return _notebook(cells)


def build_course(root: Path) -> tuple[Path, Path]:
    """Write the fixture course under ``root``; returns (course dir, notebooks dir)."""
    course = root / "course"
    for name, nb in (("01-demo", demo_notebook()), ("02-extra", extra_notebook())):
        folder = course / "source" / name
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, folder / f"{name}.ipynb")
    shutil.copy(REPO / "course" / "nbgrader_config.py", course / "nbgrader_config.py")
    notebooks = root / "notebooks"
    notebooks.mkdir(exist_ok=True)
    return course, notebooks


def load(path: Path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def cell_index(nb: dict, grade_id: str) -> int:
    for index, cell in enumerate(nb["cells"]):
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id:
            return index
    raise KeyError(grade_id)


def submission(stub: dict, solutions: dict[str, str], extra_cells: tuple = (), edit=None) -> dict:
    """A copy of the released ``stub`` with solution cells replaced by ``solutions``.

    ``extra_cells`` are (position after grade_id or None for right after setup, code) pairs.
    ``edit(nb)`` may change the notebook further.
    """
    nb = json.loads(json.dumps(stub))
    for grade_id, code in solutions.items():
        nb["cells"][cell_index(nb, grade_id)]["source"] = code
    for after, code in extra_cells:
        position = 2 if after is None else cell_index(nb, after) + 1
        nb["cells"].insert(position, nbformat.v4.new_code_cell(code))
    if edit is not None:
        edit(nb)
    return nb


def write(path: Path, nb: dict) -> Path:
    path.write_text(json.dumps(nb, indent=1), encoding="utf-8")
    return path


CORRECT = {
    "ch01_add": "def add(a, b):\n    return a + b\n",
    "ch01_mean": "def mean(values):\n    return sum(values) / len(values)\n",
    "ch01_scale": "def scale(values, factor):\n    return [v * factor for v in values]\n",
}
WRONG = {
    "ch01_add": "def add(a, b):\n    return a - b\n",
    "ch01_mean": "def mean(values):\n    return 0.0\n",
    "ch01_scale": "def scale(values, factor):\n    return values\n",
}
