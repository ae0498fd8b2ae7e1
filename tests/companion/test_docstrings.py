"""The examples in companion's docstrings run as written (the book's API reference shows them)."""

from __future__ import annotations

import dataclasses
import doctest
import importlib
import importlib.util
import inspect
import pkgutil
import re

import pytest

import companion

MODULES = sorted(
    name
    for _, name, _ in pkgutil.iter_modules(companion.__path__, "companion.")
    if name != "companion.__main__"
)


def _case(name: str):
    """A module whose examples import torchvision needs it (not beside the torch 2.13 wheel)."""
    source = importlib.util.find_spec(name).origin
    with open(source, encoding="utf-8") as file:
        vision = re.search(r"^\s*>>> .*torchvision", file.read(), re.M)
    return pytest.param(name, marks=pytest.mark.requires_torchvision) if vision else name


@pytest.mark.parametrize("name", [_case(n) for n in ["companion", *MODULES]])
def test_docstring_examples_run(name, tmp_path, monkeypatch):
    module = importlib.import_module(name)
    monkeypatch.chdir(tmp_path)  # an example that writes a file writes it here
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    failures = []
    for test in finder.find(module, name):
        result = runner.run(test, out=failures.append, clear_globs=True)
        assert result.failed == 0, "".join(failures)


# --- every public parameter has its own entry -------------------------------------------------

SECTION = re.compile(r"^(Args|Arguments|Parameters|Attributes|Returns|Yields|Raises|Example|Examples|"
                     r"Note|Notes|Warning|See Also)s?:\s*$")  # fmt: skip
ENTRY = re.compile(r"^(?P<name>\*{0,2}[\w, *]+?)(?: \([^)]*\))?:(?:\s+(?P<text>.*))?$")
REFERENCE_ONLY = re.compile(
    r"^(?:(?:as in|see|same as)\s+(?::\w+:`[^`]+`|\S+)[.;]?|the usual\b.*)$", re.IGNORECASE
)


def sections(doc: str | None) -> dict[str, dict[str, str]]:
    """``{"Args": {name: text}, "Attributes": {...}}`` of a Google-style docstring."""
    found: dict[str, dict[str, str]] = {}
    current, indent, name = None, None, None
    for line in inspect.cleandoc(doc or "").splitlines():
        stripped = line.strip()
        head = SECTION.match(line)
        if head:
            current, indent, name = head[1], None, None
            found.setdefault(current, {})
            continue
        if current is None or not stripped:
            continue
        depth = len(line) - len(line.lstrip())
        if depth == 0:  # back to the prose: the section ended
            current = None
            continue
        indent = depth if indent is None else indent
        entry = ENTRY.match(stripped) if depth == indent else None
        if entry:
            name = entry["name"]
            found[current][name] = (entry["text"] or "").strip()
        elif name is not None:
            found[current][name] += " " + stripped
    return found


def public_callables():
    """(label, callable, docstring) for every public function, class and documented method."""
    for name in sorted(companion.__all__):
        obj = getattr(companion, name)
        if inspect.isfunction(obj):
            yield name, obj, obj.__doc__
        elif inspect.isclass(obj) and not issubclass(obj, BaseException):
            # exceptions are raised by companion, never built by the user: no __init__ to teach
            init_doc = obj.__init__.__doc__ if "__init__" in vars(obj) else None
            if "__init__" in vars(obj) or dataclasses.is_dataclass(obj):
                yield name, obj, (obj.__doc__ or "") + "\n" + (init_doc or "")
            for attr, member in vars(obj).items():
                if attr.startswith("_") or not member.__doc__:
                    continue  # autodoc renders documented public methods only
                function = (
                    member.__func__ if isinstance(member, (classmethod, staticmethod)) else member
                )
                if inspect.isfunction(function):
                    yield f"{name}.{attr}", function, function.__doc__


def parameters(obj) -> list[str]:
    params = inspect.signature(obj).parameters.values()
    return [p.name for p in params if p.name not in ("self", "cls")]


CASES = list(public_callables())


def problems(label: str, obj, doc: str | None) -> list[str]:
    """What keeps ``doc`` from giving every parameter of ``obj`` a sentence of its own."""
    found = sections(doc)
    entries = {**found.get("Attributes", {}), **found.get("Args", {})}
    entries = {name.lstrip("*"): text for name, text in entries.items()}
    shared = [name for name in entries if "," in name or " " in name.strip()]
    if shared:
        return [f"{label}: one entry for several names {shared}; give each its own"]
    missing = [p for p in parameters(obj) if p not in entries]
    if missing:
        return [f"{label}: no Args entry for {missing}"]
    found_problems = [
        f"{label}: the entry for {name!r} ({entries[name]!r}) only points elsewhere; say what it is"
        for name in parameters(obj)
        if not entries[name] or REFERENCE_ONLY.match(entries[name])
    ]
    texts = [entries[p] for p in parameters(obj)]
    repeated = sorted({t for t in texts if texts.count(t) > 1})
    if repeated:
        found_problems.append(f"{label}: several parameters share the text {repeated}")
    return found_problems


@pytest.mark.parametrize(("label", "obj", "doc"), CASES, ids=[c[0] for c in CASES])
def test_every_parameter_has_an_entry_of_its_own(label, obj, doc):
    assert problems(label, obj, doc) == []


def test_the_walk_sees_the_public_api_and_each_kind_of_problem():
    labels = {label for label, _, _ in CASES}
    assert {"fit", "train_one_epoch", "export_onnx", "verify_onnx", "EarlyStopping"} <= labels
    assert {"History.column", "ThroughputTable.recommend"} <= labels  # documented methods
    doc = "Args:\n    a, b: shared.\n    c: its own,\n        on two lines.\n\nReturns:\n    x"
    assert sections(doc)["Args"] == {"a, b": "shared.", "c": "its own, on two lines."}

    def f(a, b, c):
        pass

    assert "one entry for several names" in problems("f", f, doc)[0]
    assert "no Args entry for ['b', 'c']" in problems("f", f, "F.\n\nArgs:\n    a: x.")[0]
    same = "F.\n\nArgs:\n    a: the usual.\n    b: x.\n    c: x."
    found = problems("f", f, same)
    assert "'a'" in found[0] and "points elsewhere" in found[0] and "share the text" in found[1]
    assert problems("f", f, "F.\n\nArgs:\n    a: x.\n    b: y.\n    c: as in g, but z.") == []
    assert (
        "points elsewhere"
        in problems("f", f, "F.\n\nArgs:\n    a: x.\n    b: y.\n    c: as in :func:`g`.")[0]
    )
