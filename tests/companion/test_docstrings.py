"""The examples in companion's docstrings run as written (the book's API reference shows them)."""

from __future__ import annotations

import doctest
import importlib
import importlib.util
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
