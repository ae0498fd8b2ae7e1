"""Grading the fixture course: reference, stub, mistakes, robustness cases and cheating attempts.

Every submission is graded once, in one parallel batch (module fixture); each test reads its row.
"""

from __future__ import annotations

import json
import sys

import pytest

from autograder.__main__ import main
from autograder.grader.grade import GradeResult, feedback_html, grade_notebook
from autograder.grader.pool import grade_paths

from .fixture_course import CORRECT, WRONG, cell_index, submission, write

TIMEOUT = 4.0
# Written by a learner cell: which Python the kernel runs, and the environment it was given.
ENVIRONMENT_PROBE = """\
import json, os, sys
with open(os.environ["AUTOGRADER_TEST_PROBE"], "w") as probe:
    json.dump({"python": sys.executable, "fast": os.environ.get("COURSE_FAST")}, probe)
"""

ATTACKS = {
    "showtraceback": """\
ip = get_ipython()
ip.showtraceback = lambda *args, **kwargs: None
ip._showtraceback = lambda *args, **kwargs: None
type(ip).showtraceback = lambda *args, **kwargs: None
""",
    "excepthook": "import sys\nsys.excepthook = lambda *args: None\n",
    "input_transformer": 'get_ipython().input_transformers_post.append(lambda lines: ["pass\\n"])\n',
    "ast_transformer": """\
import ast
class _NoAsserts(ast.NodeTransformer):
    def visit_Assert(self, node):
        return ast.Pass()
get_ipython().ast_transformers.append(_NoAsserts())
""",
    "redefined_helpers": """\
import contextlib
import statistics
import autograder.checks
autograder.checks.close = lambda *args, **kwargs: None
autograder.checks._compare = lambda *args, **kwargs: None
autograder.checks.reference_unavailable = lambda *args: contextlib.nullcontext()
statistics.fmean = lambda values: 0.0
def close(*args, **kwargs):
    return None
def callable(obj):
    return True
""",
    "import_hook": """\
import builtins, contextlib, types
_real_import = builtins.__import__
_fake = types.SimpleNamespace(
    close=lambda *a, **k: None, reference_unavailable=lambda *a: contextlib.nullcontext()
)
def _import(name, globals=None, locals=None, fromlist=(), level=0):
    if name == "autograder.checks":
        return _fake
    return _real_import(name, globals, locals, fromlist, level)
builtins.__import__ = _import
""",
    "sys_modules": """\
import contextlib, sys, types
sys.modules["autograder.checks"] = types.SimpleNamespace(
    close=lambda *a, **k: None, reference_unavailable=lambda *a: contextlib.nullcontext()
)
""",
    "forged_results": """\
import importlib
_h = importlib.import_module("autograder." + "ker" + "nel." + "har" + "ness")
def _forge(run, seeds, block):
    _h._state["results"] = [{"seed": seed, "data": 0.0} for seed in seeds]
_h._probe = _forge
_h._state["exec"] = lambda code, namespace: None
""",
    # A copy of the kernel made before the tests (it could answer for the learner's functions
    # through a pipe), a thread left to act while they run, a search of the interpreter's objects.
    "forked_helper": """\
import os, time
if os.fork() == 0:
    time.sleep(300)
    os._exit(0)
""",
    "thread_left_running": """\
import threading, time
def _later():
    time.sleep(300)
threading.Thread(target=_later, name="patcher", daemon=True).start()
""",
    "heap_search": """\
import gc
_functions = [o for o in gc.get_objects() if type(o).__name__ == "function"]
""",
}

ALWAYS_EQUAL = {
    "ch01_add": """\
class _Yes(float):
    def __eq__(self, other):
        return True
    __hash__ = float.__hash__
def add(a, b):
    return _Yes(0.0)
""",
    "ch01_mean": "def mean(values):\n    return _Yes(0.0)\n",
    "ch01_scale": """\
class _AllSame(list):
    def __eq__(self, other):
        return True
def scale(values, factor):
    return _AllSame()
""",
}


def _drop(grade_id):
    def edit(nb):
        del nb["cells"][cell_index(nb, grade_id)]

    return edit


def _edit_and_drop(nb):
    nb["cells"][cell_index(nb, "ch01_mean_tests")]["source"] = "pass  # tests? what tests?\n"
    del nb["cells"][cell_index(nb, "ch01_add_tests")]


def _submissions(stub):
    mistakes = {
        "ch01_add": "def add(a, b):\n    return a - b\n",
        "ch01_mean": "import statistics\ndef mean(values):\n    return statistics.fmean(values)\n",
    }
    subs = {
        "stub": stub,
        "correct": submission(stub, CORRECT, extra_cells=[(None, ENVIRONMENT_PROBE)]),
        "mistakes": submission(stub, {**CORRECT, **mistakes}),
        "infinite_loop": submission(
            stub, {**CORRECT, "ch01_add": "def add(a, b):\n    while True:\n        pass\n"}
        ),
        "stubborn_loop": submission(
            stub,
            {
                **CORRECT,
                "ch01_mean": (
                    "import time\ndef mean(values):\n    while True:\n        try:\n"
                    "            time.sleep(0.05)\n        except KeyboardInterrupt:\n"
                    "            pass\n"
                ),
            },
        ),
        "os_exit": submission(
            stub, {**CORRECT, "ch01_add": "import os\ndef add(a, b):\n    os._exit(3)\n"}
        ),
        "segfault": submission(
            stub,
            {**CORRECT, "ch01_mean": "import ctypes\ndef mean(values):\n    ctypes.string_at(0)\n"},
        ),
        "crash_in_solution_cell": submission(
            stub, {**CORRECT, "ch01_add": "import os\nos._exit(1)\n"}
        ),
        "tests_deleted_and_edited": submission(
            stub, {**CORRECT, "ch01_mean": WRONG["ch01_mean"]}, edit=_edit_and_drop
        ),
        "solution_deleted": submission(stub, CORRECT, edit=_drop("ch01_scale")),
        "syntax_error": submission(stub, {**CORRECT, "ch01_add": "def add(a, b)\n    return a\n"}),
        "stderr_warnings": submission(
            stub,
            {
                **CORRECT,
                "ch01_add": (
                    "import sys, warnings\ndef add(a, b):\n"
                    "    print('UserWarning: something is deprecated', file=sys.stderr)\n"
                    "    warnings.warn('this op is slow on CPU', UserWarning)\n"
                    "    return a + b\n"
                ),
            },
            extra_cells=[(None, "import sys\nprint('a warning on stderr', file=sys.stderr)")],
        ),
        "own_helper_cell": submission(
            stub,
            {
                **CORRECT,
                "ch01_mean": "def mean(values):\n    return _total(values) / len(values)\n",
            },
            extra_cells=[("ch01_add_tests", "def _total(values):\n    return sum(values)\n")],
        ),
        "always_equal": submission(stub, ALWAYS_EQUAL),
    }
    for name, code in ATTACKS.items():
        subs[f"attack_{name}"] = submission(stub, WRONG, extra_cells=[(None, code)])
    return subs


@pytest.fixture(scope="module")
def graded(demo, tmp_path_factory):
    course, notebooks, stub = demo
    folder = tmp_path_factory.mktemp("submissions")
    paths = {"reference": course.chapter("01-demo").source}
    for name, nb in _submissions(stub).items():
        paths[name] = write(folder / f"{name}.ipynb", nb)
    (folder / "invalid_json.ipynb").write_text("{ this is not json", encoding="utf-8")
    (folder / "not_a_notebook.ipynb").write_text("[1, 2, 3]", encoding="utf-8")
    paths["invalid_json"] = folder / "invalid_json.ipynb"
    paths["not_a_notebook"] = folder / "not_a_notebook.ipynb"
    extra = json.loads((notebooks / "02-extra.ipynb").read_text())
    paths["wrong_chapter"] = write(folder / "wrong_chapter.ipynb", extra)
    unknown = json.loads(json.dumps(stub))
    unknown["metadata"]["autograder"]["chapter"] = "09-missing"
    paths["unknown_chapter"] = write(folder / "unknown_chapter.ipynb", unknown)
    empty = json.loads(json.dumps(stub))
    empty["cells"] = [c for c in empty["cells"] if c["cell_type"] == "markdown"]
    paths["no_exercises"] = write(folder / "no_exercises.ipynb", empty)
    names = list(paths)
    with pytest.MonkeyPatch.context() as patch:  # the kernels inherit the environment
        patch.setenv("AUTOGRADER_TEST_PROBE", str(folder / "probe.json"))
        results = grade_paths(  # unconfined: the verdicts must not depend on the sandbox
            [paths[n] for n in names],
            course,
            jobs=2,
            chapter="01-demo",
            timeout=TIMEOUT,
            isolation="none",
        )
    return dict(zip(names, results, strict=True)), paths


def _row(result: GradeResult) -> dict:
    return {e.name: (e.points, e.status) for e in result.exercises}


def _feedback(result: GradeResult, name: str) -> str:
    return next(e.feedback for e in result.exercises if e.name == name)


def test_reference_scores_full_marks(graded):
    result = graded[0]["reference"]
    assert result.graded, result.error
    assert (result.points, result.max_points) == (6, 6)
    assert all(e.feedback == "passed" for e in result.exercises)
    assert result.flags == []


def test_stub_scores_zero_and_says_not_implemented(graded):
    result = graded[0]["stub"]
    assert (result.points, result.max_points) == (0, 6), result.error
    assert all("NotImplementedError" in e.feedback for e in result.exercises)
    assert result.notes == []  # released test cells are not reported as edited


def test_correct_submission_scores_full_marks_in_the_venvs_python_in_fast_mode(graded):
    assert graded[0]["correct"].points == 6
    probe = json.loads((graded[1]["correct"].parent / "probe.json").read_text())
    assert probe == {"python": sys.executable, "fast": "1"}


def test_mistakes_lose_only_their_points_with_the_checks_message(graded):
    result = graded[0]["mistakes"]
    assert _row(result) == {"add": (0, "failed"), "mean": (0, "failed"), "scale": (1, "passed")}
    add = _feedback(result, "add")
    assert add.startswith("AssertionError: add(2.0, 3.5) is wrong: are both arguments added?")
    assert "got -1.5" in add
    mean = _feedback(result, "mean")
    assert mean.startswith("ReferenceCallError: statistics.fmean is the reference implementation")


def test_feedback_is_one_line_without_traceback_or_test_source(graded):
    for result in graded[0].values():
        for exercise in result.exercises:
            text = exercise.feedback
            assert "\n" not in text and "Traceback" not in text
            assert "CANARY" not in text and "sample_values" not in text


def test_infinite_loop_costs_only_that_exercise(graded):
    result = graded[0]["infinite_loop"]
    assert _row(result) == {"add": (0, "timeout"), "mean": (3, "passed"), "scale": (1, "passed")}
    assert "more than 4 s" in _feedback(result, "add")


def test_loop_ignoring_interrupts_restarts_the_kernel_and_grading_goes_on(graded):
    result = graded[0]["stubborn_loop"]
    assert _row(result) == {"add": (2, "passed"), "mean": (0, "timeout"), "scale": (1, "passed")}
    assert "ignored the interrupt" in _feedback(result, "mean")
    assert any("restarted" in note for note in result.notes)


@pytest.mark.parametrize(
    ("name", "dead", "exit_code"), [("os_exit", "add", "exit code 3"), ("segfault", "mean", "")]
)
def test_dead_kernel_is_reported_and_later_tests_still_graded_honestly(
    graded, name, dead, exit_code
):
    result = graded[0][name]
    row = _row(result)
    assert row.pop(dead) == (0, "died")
    assert all(status == "passed" for _, status in row.values()), row
    feedback = _feedback(result, dead)
    assert feedback.startswith("KernelDied: the Python kernel died") and exit_code in feedback
    assert any("died" in note for note in result.notes)


def test_kernel_death_in_a_solution_cell_is_blamed_on_it(graded):
    result = graded[0]["crash_in_solution_cell"]
    assert _row(result)["add"] == (0, "died")
    assert "in your solution cell" in _feedback(result, "add")
    assert result.points == 4


def test_deleted_and_edited_test_cells_are_restored(graded):
    result = graded[0]["tests_deleted_and_edited"]
    assert _row(result) == {"add": (2, "passed"), "mean": (0, "failed"), "scale": (1, "passed")}
    assert "is the total divided by the count" in _feedback(result, "mean")
    assert any("tests of mean were changed" in note for note in result.notes)
    assert any("tests of add were missing" in note for note in result.notes)


def test_deleted_solution_cell_is_reported_missing(graded):
    result = graded[0]["solution_deleted"]
    assert _row(result) == {"add": (2, "passed"), "mean": (3, "passed"), "scale": (0, "missing")}
    assert "solution cell for scale is missing" in _feedback(result, "scale")


def test_syntax_error_is_reported_from_the_solution_cell(graded):
    result = graded[0]["syntax_error"]
    assert _row(result)["add"] == (0, "failed")
    assert _feedback(result, "add").startswith("SyntaxError in your solution cell")
    assert result.points == 4


def test_stderr_warnings_do_not_cost_points(graded):
    assert graded[0]["stderr_warnings"].points == 6


def test_learners_own_cells_are_kept(graded):
    assert graded[0]["own_helper_cell"].points == 6


def test_objects_that_always_compare_equal_earn_nothing(graded):
    result = graded[0]["always_equal"]
    assert result.points == 0
    assert "got an object of type _Yes" in _feedback(result, "add")


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_cheating_attempts_earn_nothing(graded, attack):
    result = graded[0][f"attack_{attack}"]
    assert result.graded, result.error
    assert result.points == 0, str(result)


def test_cheating_attempts_are_flagged_for_review(graded):
    flags = {name: graded[0][f"attack_{name}"].flags for name in ATTACKS}
    assert any("IPython's error display" in f for f in flags["showtraceback"])
    assert any("sys.excepthook" in f for f in flags["excepthook"])
    assert any("grader's autograder.kernel.harness._probe" in f for f in flags["forged_results"])
    assert any("do not match the inputs" in f for f in flags["forged_results"])
    assert any("library's attribute" in f for f in flags["redefined_helpers"])
    assert any("ctypes" in f for f in graded[0]["segfault"].flags)
    assert any("left a process it started (os.fork)" in f for f in flags["forked_helper"])
    assert any("left a thread running (patcher)" in f for f in flags["thread_left_running"])
    assert any(
        "searched the interpreter's objects (gc.get_objects)" in f for f in flags["heap_search"]
    )


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("invalid_json", "not valid notebook JSON"),
        ("not_a_notebook", "not a notebook"),
        ("wrong_chapter", "wrong chapter: this notebook is chapter 02-extra"),
        ("unknown_chapter", "no chapter '09-missing'"),
        ("no_exercises", "none of the 3 exercise cells of chapter 01-demo"),
    ],
)
def test_broken_submissions_get_a_clear_message_and_the_batch_goes_on(graded, name, message):
    result = graded[0][name]
    assert not result.graded and message in result.error
    assert result.exercises == [] and "not graded" in str(result)
    assert graded[0]["correct"].points == 6


def test_result_table_json_and_html(graded, tmp_path):
    result = graded[0]["mistakes"]
    table = str(result)
    assert "chapter 01-demo, 1 / 6 points" in table
    assert "add" in table and "0 / 2" in table
    data = json.loads(json.dumps(result.to_dict()))
    assert GradeResult.from_dict(data).to_dict() == result.to_dict()
    page = feedback_html(result, json.loads(graded[1]["mistakes"].read_text()))
    assert "<table>" in page and "statistics.fmean(values)" in page
    assert "CANARY" not in page and "BEGIN HIDDEN" not in page and "sample_values" not in page
    assert "<table>" in result._repr_html_()


def test_plot_draws_one_bar_pair_per_exercise(graded):
    import matplotlib

    matplotlib.use("Agg")
    ax = graded[0]["mistakes"].plot()
    assert len(ax.patches) == 6


def test_grade_notebook_serial_matches_batch(demo, graded):
    course, _, _ = demo
    serial = grade_notebook(graded[1]["mistakes"], course, timeout=TIMEOUT)
    batch = graded[0]["mistakes"]
    assert {**serial.to_dict(), "seconds": 0} == {**batch.to_dict(), "seconds": 0}


def test_cli_prints_tables_and_writes_json_and_feedback_pages(demo, graded, tmp_path, capsys):
    course, _, _ = demo
    paths = [str(graded[1]["mistakes"]), str(graded[1]["invalid_json"])]
    out, pages = tmp_path / "marks.json", tmp_path / "feedback"
    args = ["grade", *paths, "--course", str(course.root), "--jobs", "1", "--timeout", "10"]
    code = main([*args, "--json-file", str(out), "--feedback", str(pages)])
    printed = capsys.readouterr().out
    assert code == 1  # one notebook could not be graded
    assert "chapter 01-demo, 1 / 6 points" in printed and "not graded" in printed
    assert "graded 1 of 2 notebooks" in printed
    data = json.loads(out.read_text())["submissions"]
    assert [d["points"] for d in data] == [1, 0] and data[1]["graded"] is False
    assert sorted(p.name for p in pages.iterdir()) == ["invalid_json.html", "mistakes.html"]
    assert main([*args[:2], "--course", str(course.root), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["submissions"][0]["points"] == 1


def test_a_tensor_subclass_of_the_learners_own_is_named_for_review():
    """Chapter 3's attack returned float64 memory under a dtype that says float32: the visible
    test stops it before any hidden test sees the value, so the code itself is named."""
    from autograder.grader.grade import _scan

    def cell(code):
        return {"cell_type": "code", "metadata": {}, "source": code, "outputs": []}

    lying = "class _Float32(torch.Tensor):\n    dtype = property(lambda self: torch.float32)\n"
    flags = _scan({"cells": [cell(lying)]}, {"cells": []})
    assert flags == ["cell 1 touches a tensor subclass of its own ('class _Float32(torch.Tensor)')"]
    honest = "class Net(nn.Module):\n    pass\nx = torch.Tensor([1.0])\n"
    assert _scan({"cells": [cell(honest)]}, {"cells": []}) == []


def test_preparing_the_kernel_is_not_held_to_a_learners_cell_time(tmp_path, monkeypatch):
    """The harness imports the chapter's packages before any cell runs: on a busy machine that
    took longer than a short cell limit, and a whole submission came back ungraded (0 of 0)."""
    from autograder.course import Course
    from autograder.release import release

    from .fixture_course import build_course

    (tmp_path / "slow_to_import.py").write_text("import time\ntime.sleep(2.5)\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))  # the kernel inherits the environment
    course_dir, notebooks = build_course(tmp_path / "root")
    source = course_dir / "source" / "01-demo" / "01-demo.ipynb"
    nb = json.loads(source.read_text())
    setup = next(c for c in nb["cells"] if c["cell_type"] == "code")
    setup["source"] = "import slow_to_import\n" + "".join(setup["source"])
    source.write_text(json.dumps(nb))
    course = Course(course_dir)
    release(course, notebooks)
    result = grade_notebook(source, course, timeout=1.0, isolation="none")
    assert (result.points, result.max_points) == (6, 6), result.error


def test_a_transcribed_companion_function_is_named_for_review():
    """The companion's source is public: a learner who pastes it (helpers and all, names
    adapted) is listed for review with the function it repeats; code of their own is not."""
    from autograder.grader.grade import _scan
    from autograder.similarity import companion_sources

    def cell(code):
        return {"cell_type": "code", "metadata": {}, "source": code, "outputs": []}

    sources = companion_sources()
    pasted = (
        sources["companion.updates._matched"] + "\n\n" + sources["companion.updates.ema_update"]
    )
    pasted = pasted.replace("def ema_update(", "def my_ema(")
    flags = _scan({"cells": [cell(pasted)]}, {"cells": []})
    assert len(flags) == 1 and flags[0].startswith(
        "cell 1 matches companion.updates.ema_update's source (its my_ema, similarity 1.00, "
        "and 1 more of its definitions)"
    ), flags
    own = (
        "@torch.no_grad()\ndef my_ema(ema_model, model, decay):\n"
        "    for average, current in zip(ema_model.parameters(), model.parameters()):\n"
        "        average.mul_(decay).add_(current, alpha=1 - decay)\n"
        "        average.requires_grad_(False)\n"
        "    for average, current in zip(ema_model.buffers(), model.buffers()):\n"
        "        average.copy_(current)\n"
    )
    assert _scan({"cells": [cell(own)]}, {"cells": []}) == []


def test_an_annotated_default_is_not_an_assignment_to_a_library():
    """``device: torch.device = "cpu"`` in a signature was listed as assigning torch.device."""
    from autograder.grader.grade import _scan

    def flags(code):
        return _scan(
            {"cells": [{"cell_type": "code", "metadata": {}, "source": code}]}, {"cells": []}
        )

    assert flags('def f(x, device: torch.device = "cpu"):\n    return x\n') == []
    assert flags("if True:\n    torch.allclose = lambda *a, **k: True\n") == [
        "cell 1 touches assignment to a library's attribute ('torch.allclose =')"
    ]
