"""Copying, seen (autograder/similarity.py), measured on the submission corpora.

The independent correct answers of each exercise (``_base.py`` and every ``alt_*.py`` of
tests/course/submissions/NN/) must never pair up; planted copies of each of them (names renamed,
independent statements reordered, comments and blank lines added) must all be found; and no
correct answer may be taken for a companion function, while a renamed copy of one is.
"""

from __future__ import annotations

import ast
import builtins
import itertools
import random

import pytest

from autograder.similarity import (
    MIN_TOKENS,
    THRESHOLD,
    companion_matches,
    companion_sources,
    fingerprint,
    similar_pairs,
    similarity,
)
from tests.course.corpus import ROOT, parse


def _answers() -> dict[str, list[tuple[str, str]]]:
    """grade_id -> [(file, code)] of the corpus's independent correct answers."""
    found: dict[str, list[tuple[str, str]]] = {}
    for chapter in sorted(p for p in ROOT.iterdir() if p.is_dir()):
        for path in [chapter / "_base.py", *sorted(chapter.glob("alt_*.py"))]:
            for grade_id, block in parse(path).exercises.items():
                found.setdefault(grade_id, []).append((f"{chapter.name}/{path.name}", block.code))
    return found


ANSWERS = _answers()


class _Rename(ast.NodeTransformer):
    """Every name the code binds (variables, arguments, functions, classes) gets a new name."""

    def __init__(self, tree: ast.AST):
        bound = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                bound.add(node.id)
            elif isinstance(node, ast.arg):
                bound.add(node.arg)
            elif isinstance(node, ast.FunctionDef | ast.ClassDef):
                bound.add(node.name)
        self.names = {n: f"{n}_mine" for n in bound - set(dir(builtins)) - {"self"}}

    def visit_Name(self, node):  # noqa: N802
        node.id = self.names.get(node.id, node.id)
        return node

    def visit_arg(self, node):
        node.arg = self.names.get(node.arg, node.arg)
        return node

    def visit_FunctionDef(self, node):  # noqa: N802
        node.name = self.names.get(node.name, node.name)
        return self.generic_visit(node)

    visit_ClassDef = visit_FunctionDef  # noqa: N815


def _names(node: ast.AST) -> tuple[set[str], set[str]]:
    reads, writes = set(), set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            (writes if isinstance(sub.ctx, ast.Store) else reads).add(sub.id)
    return reads, writes


def _reorder(body: list[ast.stmt]) -> int:
    """Swap each pair of adjacent simple statements that do not touch each other's names."""
    swaps, i = 0, 0
    simple = ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Import | ast.ImportFrom
    while i + 1 < len(body):
        a, b = body[i], body[i + 1]
        if isinstance(a, simple) and isinstance(b, simple):
            (ra, wa), (rb, wb) = _names(a), _names(b)
            if not (wa & (rb | wb)) and not (wb & ra):
                body[i], body[i + 1] = b, a
                swaps += 1
                i += 2
                continue
        i += 1
    return swaps


def plant_copy(code: str, seed: int = 0) -> str:
    """A disguised copy: names renamed, independent statements and definitions reordered,
    comments and blank lines added, reformatted."""
    tree = _Rename(ast.parse(code)).visit(ast.parse(code))
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
            _reorder(body)
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)]
    if len(defs) > 1:  # definitions in another order: a helper after its user
        rest = [n for n in tree.body if n not in defs]
        tree.body = rest + defs[::-1]
    lines = ast.unparse(tree).splitlines()
    rng = random.Random(seed)
    out = []
    for line in lines:
        indent = line[: len(line) - len(line.lstrip())]
        if line.strip() and rng.random() < 0.3:
            out.append(f"{indent}# my own step: {rng.choice(['why', 'check', 'see notes'])}")
        if rng.random() < 0.1:
            out.append("")
        out.append(line + ("  # ok" if line.rstrip().endswith(")") and rng.random() < 0.3 else ""))
    return "\n".join(out) + "\n"


def test_the_corpus_holds_enough_independent_answers_to_measure():
    pairs = sum(len(v) * (len(v) - 1) // 2 for v in ANSWERS.values())
    assert len(ANSWERS) >= 30 and pairs >= 100, (len(ANSWERS), pairs)


def test_no_two_independent_correct_answers_pair_up():
    compared, false = 0, []
    for grade_id, answers in ANSWERS.items():
        for (a, code_a), (b, code_b) in itertools.combinations(answers, 2):
            score = similarity(fingerprint(code_a), fingerprint(code_b))
            compared += score > 0 or fingerprint(code_a).comparable
            if score >= THRESHOLD:
                false.append(f"{grade_id}: {a} ~ {b} ({score:.2f})")
    assert not false, false
    assert compared >= 100


@pytest.mark.parametrize("grade_id", sorted(ANSWERS))
def test_planted_copies_of_every_answer_are_found(grade_id):
    for index, (name, code) in enumerate(ANSWERS[grade_id]):
        original = fingerprint(code)
        if not original.comparable:
            continue
        copy = plant_copy(code, seed=index)
        assert copy != code
        score = similarity(original, fingerprint(copy))
        assert score >= THRESHOLD, f"{name}: planted copy scored {score:.2f}"
        pairs = similar_pairs({"original": code, "copy": copy})
        assert [(a, b) for a, b, _ in pairs] == [("original", "copy")]


def test_the_planted_copies_really_are_disguised():
    code = ANSWERS["ch04_train_one_epoch"][0][1]
    copy = plant_copy(code)
    assert "_mine" in copy and "# my own step" in copy
    assert fingerprint(code).hashes == fingerprint(copy).hashes


def test_a_changed_algorithm_is_not_a_copy():
    code = ANSWERS["ch04_train_one_epoch"][0][1]
    other = ANSWERS["ch04_evaluate"][0][1]
    assert similarity(fingerprint(code), fingerprint(other)) < 0.3


def test_short_code_and_broken_code_are_not_compared():
    short = "def add(a, b):\n    return a + b\n"
    assert fingerprint(short).tokens < MIN_TOKENS
    assert similarity(fingerprint(short), fingerprint(short)) == 0.0
    assert fingerprint("def broken(:\n") is None
    assert similar_pairs({"a": short, "b": short, "c": "def broken(:\n"}) == []


def test_no_correct_answer_is_taken_for_companion_code():
    found = [
        f"{grade_id}: {name} {definition} ~ {theirs} ({score:.2f})"
        for grade_id, answers in ANSWERS.items()
        for name, code in answers
        for definition, theirs, score in companion_matches(code)
    ]
    assert not found, found


def test_a_renamed_copy_of_a_companion_function_is_found():
    sources = companion_sources()
    assert "companion.loop.train_one_epoch" in sources and len(sources) > 100
    name, source = next(
        (n, s) for n, s in sorted(sources.items()) if n.endswith(".train_one_epoch")
    )
    found = companion_matches(plant_copy(source))
    assert found and found[0][1] == name and found[0][2] >= THRESHOLD, found


def test_scores_are_the_same_in_every_process():
    """Python salts ``hash`` of a string per process: a fingerprint built on it chose other
    hashes in each run, and the report's pairs came and went (a copy scored 0.87 in one run and
    0.95 in the next)."""
    import json
    import os
    import subprocess
    import sys

    a = "def f(x, y):\n    total = x + y\n    for i in range(3):\n        total += i * x\n    return total\n"
    b = a.replace("i * x", "i * y")
    script = (
        "import json, sys; from autograder.similarity import fingerprint, similarity; "
        "a, b = json.loads(sys.argv[1]); "
        "print(similarity(fingerprint(a), fingerprint(b)), sorted(fingerprint(a).hashes)[:3])"
    )
    runs = {
        subprocess.run(
            [sys.executable, "-c", script, json.dumps([a, b])],
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in (1, 2, 3)
    }
    assert len(runs) == 1, runs
