"""Every instructor source notebook under course/source: its structure, and that it runs.

Structure (fast, no kernel): nbformat 4, python3 kernelspec, outputs and execution counts cleared,
nbgrader metadata valid (nbgrader's own validator), unique grade_ids, every solution cell followed
by its test cell (``<grade_id>_tests``) with points shown in the exercise heading, solution and
hidden-test regions balanced and seeded with their canaries, stubs that keep their signature and
docstring once nbgrader strips the solutions, and a setup cell as the first code cell.

Execution is not here: ``autograder verify`` (a stage of ``make test``) runs every source top to
bottom with its solutions and hidden tests, in fast mode and in the grading sandbox, and fails a
chapter whose cells raise outside the exercises' tests or print a DeprecationWarning or
FutureWarning (tests/autograder/test_verify.py); running each chapter once more here cost CI
about three minutes and proved nothing more. The released notebooks run in JupyterLab in
tests/browser. Runs without ``COURSE_FAST`` (as a learner runs a chapter) and their time
budgets belong to ``benchmarks/course.py``, which reports any cell that raises there.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "course" / "source"
NOTEBOOKS = sorted(SOURCE.glob("*/*.ipynb"))
IDS = [p.parent.name for p in NOTEBOOKS]

BEGIN_SOLUTION, END_SOLUTION = "### BEGIN SOLUTION", "### END SOLUTION"
BEGIN_HIDDEN, END_HIDDEN = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
POINTS_IN_HEADING = re.compile(r"\((\d+(?:\.\d+)?) points?\)")
SETUP_MARKERS = ("import companion", "companion.setup_notebook(", "print(setup)")

pytestmark = pytest.mark.skipif(not NOTEBOOKS, reason="no source notebooks under course/source")


def _read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=nbformat.NO_CONVERT)


def _nbgrader(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def _regions(source: str, begin: str, end: str, where: str) -> list[str]:
    """The text between each begin/end marker pair; fails on unbalanced or nested markers."""
    regions, current = [], None
    for line in source.splitlines():
        stripped = line.strip()
        if stripped == begin:
            assert current is None, f"{where}: {begin!r} opened twice without {end!r}"
            current = []
        elif stripped == end:
            assert current is not None, f"{where}: {end!r} without a matching {begin!r}"
            regions.append("\n".join(current))
            current = None
        elif current is not None:
            current.append(line)
    assert current is None, f"{where}: {begin!r} is never closed by {end!r}"
    return regions


def _heading_before(cells, index: int) -> str | None:
    """The last markdown heading line above cell ``index``."""
    for cell in reversed(cells[:index]):
        if cell.cell_type == "markdown":
            headings = [ln for ln in cell.source.splitlines() if ln.lstrip().startswith("#")]
            if headings:
                return headings[-1].strip()
    return None


def _code_cells(nb) -> list[tuple[int, nbformat.NotebookNode]]:
    return [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == "code"]


# ----------------------------------------------------------------------------------- structure


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebook_is_named_after_its_folder(path):
    assert path.name == f"{path.parent.name}.ipynb", (
        f"{path.relative_to(ROOT)}: the notebook must be course/source/NN-name/NN-name.ipynb"
    )
    assert re.fullmatch(r"\d\d-[a-z0-9-]+", path.parent.name), (
        f"folder {path.parent.name!r} should look like '04-training-loop'"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_nbformat_and_kernelspec(path):
    nb = _read(path)
    assert nb.nbformat == 4, f"{path.name}: nbformat {nb.nbformat}, expected 4"
    nbformat.validate(nb)
    spec = nb.metadata.get("kernelspec", {})
    assert spec.get("name") == "python3" and spec.get("language") == "python", (
        f"{path.name}: kernelspec should be python3/python, got {spec}"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_outputs_and_execution_counts_are_cleared(path):
    dirty = [
        i
        for i, cell in _code_cells(_read(path))
        if cell.get("outputs") or cell.get("execution_count") is not None
    ]
    assert not dirty, f"{path.name}: cells {dirty} hold outputs or execution counts; clear them"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_no_markdown_cell_repeats_a_line_of_prose(path):
    """An edit applied twice leaves a sentence or a list item twice in one cell (chapter 4 once
    held its learning goal four times); tables and blank lines may repeat."""
    repeated = []
    for i, cell in enumerate(_read(path).cells):
        if cell.cell_type != "markdown":
            continue
        lines = [ln.strip() for ln in cell.source.splitlines()]
        prose = [ln for ln in lines if len(ln) > 30 and not ln.startswith(("|", "$", "```"))]
        repeated += [(i, ln[:60]) for ln in sorted(set(prose)) if prose.count(ln) > 1]
    assert not repeated, f"{path.name}: markdown lines repeated within a cell: {repeated}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_nbgrader_metadata_is_valid(path):
    from nbgrader.nbgraderformat import MetadataValidator

    nb = _read(path)
    MetadataValidator().validate_nb(nb)  # raises nbgrader's ValidationError
    prefix = f"ch{path.parent.name[:2]}_"
    seen: dict[str, int] = {}
    for i, cell in enumerate(nb.cells):
        meta = _nbgrader(cell)
        if not meta:
            continue
        assert meta.get("schema_version") == 3, f"{path.name} cell {i}: schema_version must be 3"
        grade_id = meta.get("grade_id", "")
        assert grade_id.startswith(prefix), (
            f"{path.name} cell {i}: grade_id {grade_id!r} should start with {prefix!r}"
        )
        assert grade_id not in seen, (
            f"{path.name}: grade_id {grade_id!r} is used by cells {seen[grade_id]} and {i}"
        )
        seen[grade_id] = i
        assert cell.cell_type == "code", f"{path.name} cell {i}: graded cells must be code cells"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_first_code_cell_is_the_setup_cell(path):
    nb = _read(path)
    index, first = _code_cells(nb)[0]
    assert not _nbgrader(first), f"{path.name}: the setup cell must not be a graded cell"
    missing = [m for m in SETUP_MARKERS if m not in first.source]
    assert not missing, f"{path.name}: the first code cell (cell {index}) lacks {missing}"
    assert any(c.cell_type == "markdown" for c in nb.cells[:index]), (
        f"{path.name}: the notebook should open with a markdown introduction"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_exercises_pair_solutions_with_tests(path):
    nb = _read(path)
    code = _code_cells(nb)
    solutions = [(pos, i, c) for pos, (i, c) in enumerate(code) if _nbgrader(c).get("solution")]
    graded = {_nbgrader(c)["grade_id"] for _, c in code if _nbgrader(c).get("grade")}
    assert solutions, f"{path.name}: no graded exercises"
    paired = set()
    for pos, i, cell in solutions:
        grade_id = _nbgrader(cell)["grade_id"]
        where = f"{path.name} {grade_id}"
        assert not _nbgrader(cell).get("grade"), (
            f"{where}: a solution cell must not be graded itself"
        )

        regions = _regions(cell.source, BEGIN_SOLUTION, END_SOLUTION, where)
        assert regions, f"{where}: the solution cell has no {BEGIN_SOLUTION} region"
        for region in regions:
            assert f"# CANARY {grade_id}" in region, (
                f"{where}: every solution region needs the line '# CANARY {grade_id}'"
            )
        stub = cell.source.split(BEGIN_SOLUTION)[0]
        assert re.search(r"^\s*(def|class) \w+", stub, re.M) and '"""' in stub, (
            f"{where}: put the typed signature and the docstring before {BEGIN_SOLUTION}"
        )

        assert pos + 1 < len(code), f"{where}: no test cell after the solution cell"
        test_index, test = code[pos + 1]
        meta = _nbgrader(test)
        assert meta.get("grade") and meta.get("grade_id") == f"{grade_id}_tests", (
            f"{where}: the next code cell (cell {test_index}) must be its test cell "
            f"with grade_id {grade_id + '_tests'!r}"
        )
        assert meta.get("locked") and not meta.get("solution"), f"{where}: tests must be locked"
        points = meta.get("points")
        assert isinstance(points, (int, float)) and points > 0, f"{where}: points must be > 0"
        assert test.source.lstrip().startswith("# Checks"), (
            f"{where}: the test cell's first line should say what it checks ('# Checks ...')"
        )
        hidden = _regions(test.source, BEGIN_HIDDEN, END_HIDDEN, f"{where} tests")
        assert hidden, f"{where}: the test cell has no hidden tests"
        for region in hidden:
            assert f"# CANARY {grade_id}_hidden" in region, (
                f"{where}: every hidden-test region needs the line '# CANARY {grade_id}_hidden'"
            )
        visible = test.source.split(BEGIN_HIDDEN)[0]
        assert "assert" in visible, f"{where}: the visible part should check the form"

        heading = _heading_before(nb.cells, i)
        assert heading and "Exercise" in heading, (
            f"{where}: the markdown above the solution should have an '### Exercise N' heading"
        )
        shown = POINTS_IN_HEADING.search(heading)
        assert shown and float(shown.group(1)) == float(points), (
            f"{where}: the heading {heading!r} should show '({points:g} points)'"
        )
        paired.add(meta["grade_id"])
    assert graded == paired, (
        f"{path.name}: test cells without a solution: {sorted(graded - paired)}"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_markers_appear_only_in_their_cells(path):
    for i, cell in enumerate(_read(path).cells):
        meta = _nbgrader(cell)
        if not meta.get("solution"):
            assert BEGIN_SOLUTION not in cell.source, (
                f"{path.name} cell {i}: solution marker in a non-solution cell"
            )
        if not meta.get("grade"):
            assert BEGIN_HIDDEN not in cell.source, (
                f"{path.name} cell {i}: hidden tests outside a test cell"
            )
        if not meta:
            assert "# CANARY" not in cell.source, f"{path.name} cell {i}: a canary in a plain cell"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_nbgrader_stubs_keep_signature_and_docstring(path):
    """What learners get after nbgrader strips solutions and hidden tests."""
    from nbgrader.preprocessors import ClearHiddenTests, ClearSolutions

    nb = _read(path)
    resources: dict = {}
    nb, resources = ClearSolutions().preprocess(nb, resources)
    nb, resources = ClearHiddenTests().preprocess(nb, resources)
    for i, cell in enumerate(nb.cells):
        assert "CANARY" not in cell.source, f"{path.name} cell {i}: a canary survives the release"
        if _nbgrader(cell).get("solution"):
            assert "raise NotImplementedError" in cell.source, f"{path.name} cell {i}: no stub"
            compile(cell.source, f"{path.name}:cell{i}", "exec")  # the stub is valid Python
            assert '"""' in cell.source, f"{path.name} cell {i}: the stub lost its docstring"
