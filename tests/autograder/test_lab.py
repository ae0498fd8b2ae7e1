"""autograder.lab: released notebooks that run to the end and open unmodified in JupyterLab."""

from __future__ import annotations

import nbformat
import pytest

from autograder.lab import RUN_ALL_TAG, LabReady, current_python, language_info

from .fixture_course import demo_notebook


def test_language_info_is_what_ipykernel_reports():
    # JupyterLab marks a notebook modified unless its language_info equals the kernel's exactly.
    from ipykernel.ipkernel import IPythonKernel

    assert language_info() == IPythonKernel.language_info
    assert language_info("3.99.1") == {**IPythonKernel.language_info, "version": "3.99.1"}
    assert current_python() == IPythonKernel.language_info["version"]


def _tags(nb) -> list[list[str]]:
    return [cell.metadata.get("tags", []) for cell in nb.cells]


def test_lab_ready_tags_every_test_cell_and_nothing_else():
    nb = demo_notebook()
    nb.cells[4].metadata["tags"] = ["keep-me"]  # the first test cell, already tagged
    ready, _ = LabReady(python_version="3.99.1").preprocess(nb, {})
    graded = [bool(c.metadata.get("nbgrader", {}).get("grade")) for c in ready.cells]
    assert sum(graded) == 3
    for is_test, tags in zip(graded, _tags(ready)):
        assert (RUN_ALL_TAG in tags) == is_test
    assert ready.cells[4].metadata["tags"] == ["keep-me", RUN_ALL_TAG]
    assert ready.metadata["language_info"] == language_info("3.99.1")
    again, _ = LabReady(python_version="3.99.1").preprocess(ready, {})
    assert _tags(again) == _tags(ready)  # idempotent: no tag twice


def test_lab_ready_leaves_markdown_grade_cells_alone():
    cell = nbformat.v4.new_markdown_cell("An answer graded by hand.")
    cell.metadata["nbgrader"] = {"grade": True, "solution": True, "grade_id": "ch01_essay"}
    nb = nbformat.v4.new_notebook(cells=[cell])
    ready, _ = LabReady().preprocess(nb, {})
    assert "tags" not in ready.cells[0].metadata
    assert ready.metadata["language_info"]["version"] == current_python()


def test_unknown_attribute_is_an_attribute_error():
    import autograder.lab

    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        autograder.lab.Nope  # noqa: B018
