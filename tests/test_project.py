"""The project's own files agree with each other."""

import re
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[1]


def _pyproject_requirements():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        reqs += extra
    return reqs


def _environment_requirements():
    lines = (ROOT / "environment.yml").read_text().splitlines()
    start = lines.index("  - pip:")
    return [m.group(1) for ln in lines[start + 1 :] if (m := re.match(r"\s+- ([^#\s]+)", ln))]


def _names(reqs):
    return {re.split(r"[<>=!~ \[]", r, maxsplit=1)[0].lower(): r for r in reqs}


def test_environment_yml_lists_the_same_requirements_as_pyproject():
    assert _names(_environment_requirements()) == _names(_pyproject_requirements())


def test_environment_yml_python_matches_requires_python():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert f"python{project['requires-python']}" in (ROOT / "environment.yml").read_text()


def test_ci_runs_make_test():
    assert "make test" in (ROOT / ".ci" / "run").read_text()
