"""The autograder's trust boundary, as its layout draws it.

``autograder/kernel/`` runs inside the learner's kernel, ``autograder/grader/`` in the grader's
process; ``checks`` and ``transport`` straddle the two at the top level, beside the course tools.
These tests read the package's files (imports anywhere in a module, functions included, absolute
or relative) and check that the kernel side cannot pull in what decides a grade, that the two
sides meet only in the straddlers, that the package docstring names every module where it lies,
and that the names the grader sends to the kernel or runs with ``-m`` still exist.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import textwrap
from functools import cache
from pathlib import Path

import pytest

import autograder

PACKAGE = Path(autograder.__file__).parent
ROOT = "autograder"
KERNEL = "autograder.kernel"
GRADER = "autograder.grader"
STRADDLERS = {"autograder.checks", "autograder.transport"}
# Dotted names in the package's text that are not modules: notebook metadata keys and the name
# the judge gives a hidden test's namespace.
NOT_MODULES = {"autograder.chapter", "autograder.language", "autograder.hidden"}


@cache
def modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its ``__init__``)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _side(name: str) -> str:
    for package in (KERNEL, GRADER):
        if name == package or name.startswith(package + "."):
            return package
    return ROOT


def _owner(name: str) -> str | None:
    """The module a dotted name lies in (``autograder.checks.close`` -> ``autograder.checks``)."""
    while name:
        if name in modules():
            return name
        name = name.rpartition(".")[0]
    return None


def imports(name: str) -> set[str]:
    """The package's modules that ``name`` imports (parents of a submodule included)."""
    path = modules()[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def add(dotted: str) -> None:
        owner = _owner(dotted)
        while owner:  # importing a.b.c runs a/__init__ and a/b/__init__ first
            found.add(owner)
            owner = owner.rpartition(".")[0]

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == ROOT:
                    add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            if base.split(".")[0] != ROOT:
                continue
            for alias in node.names:
                add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules() else base)
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "id", getattr(node.func, "attr", None))
            in ("__import__", "import_module")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and str(node.args[0].value).split(".")[0] == ROOT
        ):
            add(node.args[0].value)
    found.discard(name)
    return found


def reach(name: str) -> dict[str, list[str]]:
    """Every module ``name`` loads, directly or through others, with the chain that loads it."""
    chains = {name: [name]}
    stack = [name]
    while stack:
        current = stack.pop()
        for other in sorted(imports(current)):
            if other not in chains:
                chains[other] = chains[current] + [other]
                stack.append(other)
    del chains[name]
    return chains


def on(side: str) -> set[str]:
    return {m for m in modules() if _side(m) == side and m != side}


def _declared() -> dict[str, set[str]]:
    """The modules the package docstring's "Trust boundary" list places on each side."""
    section = autograder.__doc__.split("Trust boundary", 1)[1].split("\n\n", 2)[1]
    declared = {}
    for item in re.split(r"\n- ", "\n" + section.strip())[1:]:
        head, _, rest = item.partition(":")
        folder = re.match(r"``(\w+)/``", head)
        key = folder.group(1) if folder else "straddlers" if "straddl" in head else "tools"
        names = re.findall(r"``(\w+)``", rest.split(". ")[0])
        declared[key] = set(names)
    return declared


def test_the_package_has_a_kernel_side_and_a_grader_side_and_nothing_else_below_it():
    folders = {p.parent for p in PACKAGE.rglob("*.py")}
    assert {f.relative_to(PACKAGE).as_posix() for f in folders} == {".", "kernel", "grader"}
    for folder in folders:  # a folder without __init__ would be a namespace package, outside this
        assert (folder / "__init__.py").is_file(), folder
    assert on(KERNEL) and on(GRADER)
    for package in (KERNEL, GRADER):
        doc = ast.get_docstring(ast.parse(modules()[package].read_text(encoding="utf-8")))
        assert doc and len(doc.splitlines()) >= 2, (
            f"{package} needs a docstring saying what runs there"
        )


def test_the_package_docstring_places_every_module_where_it_lies():
    declared = _declared()
    assert set(declared) == {"kernel", "grader", "straddlers", "tools"}, declared
    short = lambda names: {n.rpartition(".")[2] for n in names}  # noqa: E731
    assert declared["kernel"] == short(on(KERNEL)), declared["kernel"] ^ short(on(KERNEL))
    assert declared["grader"] == short(on(GRADER)), declared["grader"] ^ short(on(GRADER))
    top = short(on(ROOT) - {KERNEL, GRADER})
    assert declared["straddlers"] == short(STRADDLERS)
    assert declared["straddlers"] | declared["tools"] == top, top ^ (
        declared["straddlers"] | declared["tools"]
    )
    assert not declared["straddlers"] & declared["tools"]


def test_the_kernel_side_loads_nothing_of_the_grader_side():
    """Code that runs beside a submission must not pull in what decides the grade."""
    allowed = {ROOT} | on(KERNEL) | {KERNEL} | STRADDLERS
    for name in sorted(on(KERNEL) | {KERNEL}):
        for other, chain in reach(name).items():
            assert _side(other) != GRADER, " -> ".join(chain)
            assert other in allowed, " -> ".join(chain) + ": a course tool in the kernel"


def test_the_learners_lab_tools_load_nothing_that_grades():
    """Check's panel runs in the learner's own kernel: the verdict comes from another process."""
    for name in (
        "autograder.inlab",
        "autograder.progress",
        "autograder.verdict",
        "autograder.hints",
    ):
        for other, chain in reach(name).items():
            assert _side(other) != GRADER, " -> ".join(chain)


def test_the_grader_side_imports_nothing_of_the_kernel_side():
    """The grader names the harness only in the code it sends to the kernel; it never loads it."""
    for name in sorted(on(GRADER) | {GRADER}):
        for other, chain in reach(name).items():
            assert _side(other) != KERNEL, " -> ".join(chain)


def test_checks_and_transport_are_the_only_straddlers():
    kernel = set().union(*(reach(m) for m in on(KERNEL) | {KERNEL}))
    grader = set().union(*(reach(m) for m in on(GRADER) | {GRADER}))
    both = {m for m in kernel & grader if _side(m) == ROOT} - {ROOT}
    assert both == STRADDLERS, both
    for name in sorted(STRADDLERS):  # and they lean on neither side, nor on the course tools
        for other, chain in reach(name).items():
            assert other in STRADDLERS | {ROOT}, " -> ".join(chain)


def test_the_kernel_side_loads_only_itself_and_the_straddlers_when_installed(tmp_path):
    """At run time as well: import and install the harness as the grader does, then look."""
    script = textwrap.dedent(
        f"""
        import json, os, sys
        from autograder.kernel import harness
        payload = os.path.join({str(tmp_path)!r}, "payload.json")
        with open(payload, "w") as f:
            json.dump({{"protect": ["builtins", "autograder.checks"], "references": []}}, f)
        harness.install(payload)
        print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] == "autograder")))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout.splitlines()[-1]))
    assert loaded == {ROOT, KERNEL} | on(KERNEL) | STRADDLERS, loaded


def _named_modules(path: Path) -> set[str]:
    """Dotted names the file's text uses as modules: exact string constants (``-m`` arguments,
    lazy imports), imports in code sent to a kernel, and docstring cross-references."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            continue
        text = node.value
        if re.fullmatch(r"autograder(\.\w+)+", text):
            names.add(text)
        for match in re.finditer(r"__import__\(\s*['\"]([\w.]+)['\"]", text):
            names.add(match.group(1))
        for match in re.finditer(r"^\s*import\s+([\w., ]+)", text, re.MULTILINE):
            names |= {n.strip() for n in match.group(1).split(",")}
        for match in re.finditer(r":(?:mod|func|class|data|meth|attr):`~?([\w.]+)`", text):
            names.add(match.group(1))
    return {n for n in names if n.split(".")[0] == ROOT} - NOT_MODULES


def test_every_module_the_package_names_exists():
    """After a move, the harness the grader sends to the kernel (by name) must still be there."""
    import importlib

    checked = set()
    for name, path in sorted(modules().items()):
        for dotted in sorted(_named_modules(path)):
            owner = _owner(dotted)
            assert owner, f"{path.relative_to(PACKAGE.parent)} names {dotted}, which is no module"
            target = importlib.import_module(owner)
            for attribute in dotted[len(owner) + 1 :].split(".") if dotted != owner else []:
                assert hasattr(target, attribute), f"{name} names {dotted}: no {attribute}"
                target = getattr(target, attribute)
            checked.add(dotted)
    assert {"autograder.kernel.harness", "autograder.grader.confine"} <= checked


@pytest.mark.parametrize(
    "name",
    sorted({m for m in modules() if _side(m) != ROOT} | {"autograder.transport"})
    + ["autograder._harness", "autograder.judge", "autograder.execute"],
)
def test_learner_code_that_names_the_graders_internals_is_flagged(name):
    from autograder.grader.grade import _SUSPICIOUS

    internals = [p for p, what in _SUSPICIOUS if what == "the grader's internals"]
    for code in (f"import {name}", f"m = sys.modules[{name!r}]"):
        assert any(re.search(p, code) for p in internals), code
    package, _, module = name.rpartition(".")
    for code in (f"from {package} import {module}", f"from {package} import (x,\n    {module})"):
        assert any(re.search(p, code) for p in internals), code
