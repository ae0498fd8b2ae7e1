"""Which cells an exercise needs (autograder/grader/deps.py): names bound and read, state."""

from __future__ import annotations

from autograder.grader.deps import imported, names, needed


def test_a_cell_is_needed_for_a_name_it_binds_and_only_then():
    codes = ["import math", "x = 1", "y = 2", "def f():\n    return x", "print(f())"]
    assert needed(codes, {4}) == [False, True, False, True, True]
    assert needed(codes, {0, 4}) == [True, True, False, True, True]


def test_a_definition_read_later_in_its_own_cell_is_not_a_read():
    binds, reads, _ = names("def _run():\n    return 1\n\nhidden_test(_run)", set())
    assert "_run" in binds and "_run" not in reads and "hidden_test" in reads


def test_a_helper_using_a_global_its_cell_defines_reads_nothing_from_before():
    code = "_CASES = {0: 1}\n\ndef _run(seed):\n    return add(*_CASES[seed])\n"
    _, reads, _ = names(code, set())
    assert reads == {"add"}


def test_importing_again_what_an_earlier_cell_imported_is_no_reason_to_run():
    codes = ["import torch", "import torch\nslow = torch.ones(1)", "print(torch.zeros(1))"]
    assert needed(codes, {2}) == [True, False, True]


def test_state_set_at_top_level_keeps_a_cell_but_not_inside_a_function_or_a_thread_count():
    modules = {"torch", "np"}
    assert names("torch.set_default_dtype(torch.float64)", modules)[2] is True
    assert names("os.environ['X'] = '1'", {"os"})[2] is True
    assert names("def f():\n    torch.set_default_dtype(torch.float64)", modules)[2] is False
    assert names("torch.set_num_threads(1)", modules)[2] is False  # speed, not results
    codes = ["import torch", "torch.set_num_threads(4)\nslow = 1", "torch.manual_seed(0)", "x = 1"]
    assert needed(codes, {0, 3}) == [True, False, False, True]


def test_other_exercises_tests_run_only_for_a_name_they_bind():
    codes = ["import torch", "torch.set_default_dtype(torch.float64)", "y = f()"]
    assert needed(codes, {0, 2}, stateless={1}) == [True, False, True]
    assert needed(codes, {0, 2}) == [True, True, True]


def test_magics_are_read_as_the_calls_ipython_makes_and_unreadable_cells_are_kept():
    codes = ["x = 1", "%time y = 2", "print(y)"]
    assert needed(codes, {2}) == [False, True, True]
    codes = ["x = 1", "!ls -la", "print(1)"]
    assert needed(codes, {2})[1] is True  # kept: it might set anything


def test_imported_names():
    assert imported("import numpy as np\nfrom torch import nn, optim") == {"np", "nn", "optim"}


def test_a_module_imported_by_a_call_is_a_module_and_changing_it_is_state():
    code = 'h = importlib.import_module("autograder.kernel")\nh.probe = forge'
    modules = imported(code)
    assert "h" in modules
    assert names(code, modules)[2] is True
    assert needed(["import os", code, "x = 1"], {0, 2}) == [True, True, True]
