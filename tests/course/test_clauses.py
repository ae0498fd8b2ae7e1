"""Every docstring clause of every exercise is guarded, and the guard is proved by the corpus.

``docs/clauses/NN.md`` lists, per exercise (``## chNN_name``), one table row per clause of the
exercise's docstring: the clause, the hidden input that fails a solution ignoring it, and the
corpus file that is such a solution. This test reads those tables (no grading: the corpus test
grades the files) and checks that the documentation and the corpus agree: every exercise of the
chapter has its section, every row names a corpus file, and that file answers the exercise wrongly
(``points=0``), so that the row's claim is proved each time the corpus is graded.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from autograder.course import Course, cell_grade_id, is_solution_cell

from .corpus import ROOT, submissions

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs" / "clauses"
COURSE = Course(REPO / "course")
CHAPTERS = [f"{c.number:02d}" for c in COURSE.chapters()]
_SECTION = re.compile(r"^##\s+`?(ch\d\d_\w+?)`?\s*$")
_SEPARATOR = re.compile(r"^\|[\s|:-]+\|$")


def parse(text: str) -> dict[str, list[list[str]]]:
    """{grade_id: [[clause, hidden input, corpus file], ...]} from a clauses page.

    >>> parse("## ch01_f\\n| clause | input | file |\\n|---|---|---|\\n| a | b | `m.py` |\\n")
    {'ch01_f': [['a', 'b', 'm.py']]}
    """
    sections: dict[str, list[list[str]]] = {}
    current = None
    header_seen = False
    for line in text.splitlines():
        match = _SECTION.match(line.strip())
        if match:
            current, header_seen = match.group(1), False
            sections[current] = []
            continue
        if current is None or not line.strip().startswith("|") or _SEPARATOR.match(line.strip()):
            continue
        if not header_seen:
            header_seen = True
            continue
        cells = [c.strip().strip("`").strip() for c in line.strip().strip("|").split("|")]
        sections[current].append(cells)
    return sections


def _exercises(chapter: str) -> list[str]:
    nb = COURSE.chapter(chapter).read_source()
    return [cell_grade_id(c) for c in nb["cells"] if is_solution_cell(c) and cell_grade_id(c)]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_clause_is_guarded_by_a_corpus_mistake(chapter):
    page = DOCS / f"{chapter}.md"
    assert page.is_file(), f"{page.relative_to(REPO)} is missing: document the chapter's guards"
    sections = parse(page.read_text(encoding="utf-8"))
    exercises = _exercises(chapter)
    missing = [g for g in exercises if not sections.get(g)]
    assert not missing, f"{page.name}: no clause table for {missing}"
    stale = sorted(set(sections) - set(exercises))
    assert not stale, f"{page.name}: sections for exercises the chapter lacks: {stale}"
    corpus = {s.path.name: s for s in submissions(chapter)}
    for grade_id, rows in sections.items():
        for row in rows:
            assert len(row) >= 3 and row[0] and row[1], f"{page.name} {grade_id}: bad row {row}"
            names = re.findall(r"[\w.-]+\.py", row[2])
            assert names, f"{page.name} {grade_id}: the row {row[0]!r} names no corpus file"
            for name in names:
                sub = corpus.get(name)
                assert sub is not None, (
                    f"{page.name} {grade_id}: {name} is not in {ROOT.name}/{chapter}/"
                )
                block = sub.exercises.get(grade_id)
                assert block is not None and block.points == 0, (
                    f"{page.name} {grade_id}: {name} must answer {grade_id} with points=0 "
                    f"(the clause {row[0]!r} is proved by a solution that ignores it)"
                )


def test_parse_reads_the_documented_format():
    text = (
        "# Chapter 01\n\n## ch01_f\n\n| clause | hidden input | corpus file |\n|---|---|---|\n"
        "| takes x | seed 1: x=3 | `mistake_a.py` |\n| returns y | seed 0 | mistake_b.py, m_c.py |\n"
        "\n## `ch01_g`\n| c | i | f |\n|:--|--|--|\n| z | w | m.py |\n"
    )
    got = parse(text)
    assert got == {
        "ch01_f": [
            ["takes x", "seed 1: x=3", "mistake_a.py"],
            ["returns y", "seed 0", "mistake_b.py, m_c.py"],
        ],
        "ch01_g": [["z", "w", "m.py"]],
    }
