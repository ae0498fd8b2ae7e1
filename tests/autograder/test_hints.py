"""The hint ladder (autograder/hints.py) on the real chapters: clause, then section, each edition."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.course import Course, cell_grade_id, cell_source
from autograder.hints import anchor, best_clause, best_section, clauses, docstring, sections

REPO = Path(__file__).resolve().parents[2]

# (language, grade_id, feedback grading gives for a typical mistake, words of the right clause,
#  words of the right section's heading)
CASES = [
    (
        "en",
        "ch04_evaluate",
        "the model arrived in train mode and was left in eval mode: hand it back in the mode it had",
        "Every module leaves in the mode it arrived in",
        "back to `train()`",
    ),
    (
        "en",
        "ch04_residual_block",
        "ResidualBlock(4, 4, stride=1), new, in eval mode: the output should equal x, and differs: "
        "it returns x in train mode but not in eval mode",
        "Starts as the identity",
        "skip connection",
    ),
    (
        "zh",
        "ch04_evaluate",
        "模型进来时处于训练模式，离开时却处于评估模式：请按它原来的模式交还",
        "每个模块离开时都处于它进来时的模式",
        "回到 `train()`",
    ),
]


@pytest.mark.parametrize(("language", "grade_id", "feedback", "clause", "section"), CASES)
def test_the_ladder_names_the_broken_clause_and_the_section_that_teaches_it(
    language, grade_id, feedback, clause, section
):
    source = Course(REPO / "course", language).chapter("04").read_source()
    at = next(i for i, c in enumerate(source["cells"]) if cell_grade_id(c) == grade_id)
    found = best_clause(feedback, clauses(docstring(cell_source(source["cells"][at]))))
    assert found is not None and found.startswith(clause), found
    where = best_section(feedback + " " + found, sections(source, before=at))
    assert where is not None and section in where.title, where
    assert not where.title.startswith(("Exercise", "练习"))


def test_clauses_split_bullets_entries_and_sentences():
    text = "Do A. Then B.\n\n- keeps C\n  and D\n\nArgs:\n    x: the input.\n      More."
    assert clauses(text) == ["Do A.", "Then B.", "keeps C and D", "x: the input. More."]
    assert clauses("一句话。另一句话。") == ["一句话。", "另一句话。"]
    assert clauses('Returns:\n    ``{"loss": ..., "accuracy": ...}``, both numbers.') == [
        '``{"loss": ..., "accuracy": ...}``, both numbers.'
    ]


def test_a_clause_needs_a_shared_word_and_anchors_follow_jupyterlab():
    assert best_clause("zzz qqq", ["The model stays.", "Returns a float."]) is None
    assert anchor("2 · `train()` and `eval()` change **what** layers compute") == (
        "2-·-train()-and-eval()-change-what-layers-compute"
    )


def test_docstring_reads_the_first_definition_even_without_a_body():
    assert docstring('class A:\n    """Say A."""\n    ### BEGIN SOLUTION\n') == "Say A."
    assert docstring("def f(:\n    '''broken.'''") == "broken."
