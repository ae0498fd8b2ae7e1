"""The lab's side of Check (autograder/inlab.py, autograder/lab.py): what the kernel remembers,
where the panel appears, and the kernels the learner's lab starts."""

from __future__ import annotations

import types

import pytest

from autograder import inlab
from autograder.lab import LearnerKernelSpecs

from .fixture_course import cell_index, write


class _Events:
    def __init__(self):
        self.handlers = {}

    def register(self, name, handler):
        self.handlers.setdefault(name, []).append(handler)

    def unregister(self, name, handler):
        self.handlers[name].remove(handler)


@pytest.fixture
def lab(demo, tmp_path, monkeypatch):
    _, _, stub = demo
    path = write(tmp_path / "01-demo.ipynb", stub)
    monkeypatch.setenv("JPY_SESSION_NAME", str(path))
    shell = types.SimpleNamespace(events=_Events())
    inlab.load_ipython_extension(shell)
    panels = []
    monkeypatch.setattr(inlab._lab, "show_panel", lambda p, g: panels.append((p, g)))
    yield inlab._lab, shell, stub, panels
    inlab.unload_ipython_extension(shell)


def _run(shell, cell_id, code):
    info = types.SimpleNamespace(cell_id=cell_id, raw_cell=code)
    for handler in shell.events.handlers["pre_run_cell"]:
        handler(info)
    for handler in shell.events.handlers["post_run_cell"]:
        handler(types.SimpleNamespace(info=info))


def test_the_kernel_remembers_each_cells_last_run_in_order(lab):
    state, shell, stub, _ = lab
    _run(shell, "a", "x = 1")
    _run(shell, "b", "y = 2")
    _run(shell, "a", "x = 3")
    assert state.sources == {"a": "x = 3", "b": "y = 2"} and state.order == ["b", "a"]


def test_the_panel_appears_under_a_test_cell_and_nowhere_else(lab):
    state, shell, stub, panels = lab
    tests = stub["cells"][cell_index(stub, "ch01_mean_tests")]["id"]
    solution = stub["cells"][cell_index(stub, "ch01_mean")]["id"]
    _run(shell, solution, "def mean(v):\n    return 0.0\n")
    assert panels == []
    _run(shell, tests, "assert callable(mean)")
    assert panels == [(str(state.notebook_path()), "ch01_mean")]
    _run(shell, "not-in-the-file", "1 + 1")
    assert len(panels) == 1


def test_a_notebook_the_lab_did_not_name_shows_nothing(lab, monkeypatch):
    state, shell, stub, panels = lab
    monkeypatch.delenv("JPY_SESSION_NAME")
    _run(shell, stub["cells"][cell_index(stub, "ch01_add_tests")]["id"], "pass")
    assert panels == [] and state.notebook_path() is None
    with pytest.raises(ValueError, match="cannot tell which notebook"):
        inlab.check("add")


def test_the_learners_kernels_load_the_extension_and_nothing_else_changes():
    specs = LearnerKernelSpecs()
    argv = specs.get_kernel_spec("python3").argv
    assert argv[-1] == "--IPKernelApp.extra_extensions=autograder.inlab"
    assert argv[:-1] == type(specs).__mro__[1]().get_kernel_spec("python3").argv


def test_the_learner_labs_config_uses_those_kernels():
    from traitlets.config.loader import PyFileConfigLoader

    from .fixture_course import REPO

    config = PyFileConfigLoader(
        "jupyter_server_config.py", path=str(REPO / "lab" / "learner")
    ).load_config()
    assert config.ServerApp.kernel_spec_manager_class == "autograder.lab.LearnerKernelSpecs"
    instructor = PyFileConfigLoader(
        "jupyter_server_config.py", path=str(REPO / "lab" / "instructor")
    ).load_config()
    assert "kernel_spec_manager_class" not in instructor.get("ServerApp", {})
