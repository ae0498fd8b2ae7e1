"""The autograder's trust boundary, as its package docstring states it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import autograder

PACKAGE = Path(autograder.__file__).parent
MODULES = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__")


def _sides() -> dict[str, set[str]]:
    section = autograder.__doc__.split("Trust boundary", 1)[1].split("\n\n", 2)[1]
    sides = {}
    for item in re.split(r"\n- ", "\n" + section.strip())[1:]:
        where, _, modules = item.partition(":")
        names = re.findall(r"(?<![\w`])(_?[a-z_]+)(?= \(|,|$)", modules.replace("\n", " "))
        sides[where.split(",")[0].strip()] = {n for n in names if n in MODULES}
    return sides


def test_every_module_is_placed_on_a_side_of_the_boundary():
    sides = _sides()
    placed = set().union(*sides.values())
    assert placed == set(MODULES), set(MODULES) ^ placed
    assert {"_harness", "transport", "checks"} <= sides["in the learner's kernel"]
    assert "judge" in sides["in the grader's process"]


def test_the_kernel_side_imports_nothing_of_the_grader_side():
    """Code a submission can reach must not pull in what decides the grade."""
    sides = _sides()
    kernel = sides["in the learner's kernel"]
    grader_only = sides["in the grader's process"] - kernel
    for name in kernel:
        tree = ast.parse((PACKAGE / f"{name}.py").read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("autograder"):
                imported = {node.module.split(".")[1]} if "." in node.module else set()
                imported |= {a.name for a in node.names}
                assert not imported & grader_only, (name, node.module, imported & grader_only)
