"""Grading the real chapter 4: the reference, the stub, typical mistakes and a cheater.

Mistaken submissions are the reference solution with one classic bug per exercise; each must lose
exactly that exercise's points, with feedback naming the mistake. Skipped until chapter 4 exists.
"""

from __future__ import annotations

import json
import re

import pytest

from autograder.course import Course
from autograder.pool import grade_paths
from autograder.release import released_notebook

from .fixture_course import REPO, cell_index, write

CHAPTER = "04-training-loop"
SOURCE = REPO / "course" / "source" / CHAPTER / f"{CHAPTER}.ipynb"
pytestmark = pytest.mark.skipif(not SOURCE.is_file(), reason="chapter 4 is not written yet")

# exercise -> [(regex over the reference solution's lines, replacement)]: one classic mistake each.
MISTAKES_A = {
    "ch04_residual_block": [(r"return F\.relu\(x \+ out\)", "return F.relu(out)")],
    "ch04_train_one_epoch": [(r"^\s*optimizer\.zero_grad\(\).*\n", "")],
    "ch04_evaluate": [(r"^\s*model\.eval\(\).*\n", "")],
    "ch04_checkpoint": [
        (r'^\s*"optimizer": optimizer\.state_dict\(\),.*\n', ""),
        (r'^\s*optimizer\.load_state_dict\(checkpoint\["optimizer"\]\).*\n', ""),
    ],
    "ch04_strip_module_prefix": [
        (
            r'key\.removeprefix\("module\."\)\.removeprefix\("_orig_mod\."\)',
            'key.replace("module.", "").replace("_orig_mod.", "")',
        )
    ],
}
MISTAKES_B = {
    "ch04_residual_block": [(r"return F\.relu\(x \+ out\)", "return x + F.relu(out)")],
    "ch04_train_one_epoch": [(r"^(\s*)model\.train\(\).*$", r"\1pass  # model.train() forgotten")],
    "ch04_evaluate": [(r"^(\s*)with torch\.no_grad\(\):.*$", r"\1if True:")],
    "ch04_checkpoint": [
        (r'^\s*"scheduler": scheduler\.state_dict\(\),.*\n', ""),
        (r'^\s*scheduler\.load_state_dict\(checkpoint\["scheduler"\]\).*\n', ""),
    ],
    "ch04_strip_module_prefix": [
        (
            r"^(\s*)prefixes = \(",
            r"\1return dict(companion.strip_prefixes(state_dict))\n\1prefixes = (",
        )
    ],
}
FEEDBACK_A = {
    "residual_block": "is the input added back",
    "train_one_epoch": "optimizer.zero_grad()",
    "evaluate": "model.eval()",
    "checkpoint": "optimizer state",
    "strip_module_prefix": "str.replace",
}
FEEDBACK_B = {
    "residual_block": "ReLU applied after the addition",
    "train_one_epoch": "model.train()",
    "evaluate": "torch.no_grad()",
    "checkpoint": "scheduler",
    "strip_module_prefix": "not delegated to the companion",
}
CHEATS = """\
import autograder.checks
import companion
import torch.testing
torch.testing.assert_close = lambda *args, **kwargs: None
autograder.checks.close = lambda *args, **kwargs: None
get_ipython().showtraceback = lambda *args, **kwargs: None
def isinstance(*args):
    return True
"""
SWAP_REFERENCE = """\
companion.train_one_epoch = train_one_epoch  # the "reference" now agrees with me
companion.loop.train_one_epoch.__code__ = train_one_epoch.__code__
"""


def _mutate(nb: dict, mistakes: dict) -> dict:
    """Apply the edits inside the solution regions of each exercise's cell."""
    nb = json.loads(json.dumps(nb))
    for grade_id, edits in mistakes.items():
        cell = nb["cells"][cell_index(nb, grade_id)]
        parts = re.split(r"(### (?:BEGIN|END) SOLUTION)", "".join(cell["source"]))
        for pattern, replacement in edits:
            count = 0
            for i in range(2, len(parts), 4):  # the text between BEGIN and END markers
                parts[i], n = re.subn(pattern, replacement, parts[i], flags=re.MULTILINE)
                count += n
            assert count, f"chapter 4 changed: {pattern!r} matches nothing in {grade_id}"
        cell["source"] = "".join(parts)
    return nb


@pytest.fixture(scope="module")
def chapter4(tmp_path_factory):
    folder = tmp_path_factory.mktemp("chapter4")
    course = Course(REPO / "course")
    source = json.loads(SOURCE.read_text())
    stub = folder / "stub.ipynb"
    stub.write_text(released_notebook(course, course.chapter(CHAPTER)))
    cheater = _mutate(source, {"ch04_train_one_epoch": MISTAKES_A["ch04_train_one_epoch"]})
    cheater["cells"].insert(2, {**cheater["cells"][1], "source": CHEATS, "id": "cheat-1"})
    after = cell_index(cheater, "ch04_train_one_epoch") + 1
    cheater["cells"].insert(
        after, {**cheater["cells"][1], "source": SWAP_REFERENCE, "id": "cheat-2"}
    )
    paths = {
        "reference": SOURCE,
        "stub": stub,
        "mistakes_a": write(folder / "mistakes_a.ipynb", _mutate(source, MISTAKES_A)),
        "mistakes_b": write(folder / "mistakes_b.ipynb", _mutate(source, MISTAKES_B)),
        "cheater": write(folder / "cheater.ipynb", cheater),
    }
    results = grade_paths(list(paths.values()), course, jobs=2, chapter=CHAPTER, timeout=120)
    return dict(zip(paths, results, strict=True))


def test_reference_scores_full_marks(chapter4):
    result = chapter4["reference"]
    assert result.graded, result.error
    assert result.points == result.max_points > 0, str(result)
    assert result.flags == [] and result.notes == []


def test_stub_scores_zero(chapter4):
    result = chapter4["stub"]
    assert result.graded and result.points == 0 and result.max_points > 0, str(result)
    assert all("NotImplementedError" in e.feedback for e in result.exercises), str(result)


@pytest.mark.parametrize(
    ("name", "expected"), [("mistakes_a", FEEDBACK_A), ("mistakes_b", FEEDBACK_B)]
)
def test_each_typical_mistake_loses_its_points_with_the_right_feedback(chapter4, name, expected):
    result = chapter4[name]
    assert result.graded, result.error
    for exercise in result.exercises:
        assert exercise.points == 0, f"{exercise.name} passed despite the mistake:\n{result}"
        assert expected[exercise.name] in exercise.feedback, str(result)


def test_cheating_does_not_pay(chapter4):
    result = chapter4["cheater"]
    by_name = {e.name: e for e in result.exercises}
    assert by_name["train_one_epoch"].points == 0, str(result)
    assert all(e.points == e.max_points for n, e in by_name.items() if n != "train_one_epoch")
    assert any("IPython's error display" in flag for flag in result.flags)
    assert any("function internals" in flag for flag in result.flags)
