"""companion's layout: every module in one documented wing, and no reach into private names."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import companion

PACKAGE = Path(companion.__file__).parent
MODULES = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__")


def _wings() -> dict[str, list[str]]:
    doc = companion.__doc__
    section = doc.split("Wings", 1)[1].split("\n\n", 2)[1]
    wings = {}
    for item in re.split(r"\n- ", "\n" + section.strip())[1:]:
        name, _, modules = item.partition(":")
        wings[name.strip()] = [m.strip() for m in modules.replace("\n", " ").split(",")]
    return wings


def test_every_module_is_in_exactly_one_wing():
    listed = [m for modules in _wings().values() for m in modules]
    assert sorted(listed) == MODULES, set(listed) ^ set(MODULES)


def test_no_module_imports_or_reaches_another_modules_private_names():
    found = []
    for path in sorted(PACKAGE.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("companion"):
                found += [
                    f"{path.name}: from {node.module} import {a.name}"
                    for a in node.names
                    if a.name.startswith("_") and not a.name.startswith("__")
                ]
            elif isinstance(node, ast.Attribute) and node.attr.startswith("_"):
                base = ast.unparse(node.value)
                if base.startswith("companion.") and not node.attr.startswith("__"):
                    found.append(f"{path.name}: {base}.{node.attr}")
    assert found == []
