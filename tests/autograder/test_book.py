"""The book builder's parts (autograder/book.py); the built site is opened in tests/browser."""

from __future__ import annotations

from pathlib import Path

import pytest

import companion
from autograder.book import (
    API_GROUPS,
    API_INTROS,
    BookError,
    _annotate,
    _api_names,
    _api_pages,
    _clean,
    _home,
    build_book,
    check_links,
    page_text,
)
from autograder.course import Course
from autograder.verify import course_secrets, leak_scan_text

ROOT = Path(__file__).resolve().parents[2]


def test_every_public_companion_name_is_in_exactly_one_api_group():
    listed = [name for _, names in API_GROUPS.values() for name in names]
    assert sorted(set(listed)) == sorted(listed), "a name is in two groups"
    assert sorted(listed) == sorted(companion.__all__)


def _cell(kind, source, **extra):
    cell = {"cell_type": kind, "metadata": {}, "source": source, **extra}
    if kind == "code":
        cell.setdefault("outputs", [])
    return cell


def _test_cell(outputs):
    meta = {"nbgrader": {"grade": True, "grade_id": "ch01_x_tests", "points": 1, "solution": False}}
    return {"cell_type": "code", "metadata": meta, "source": "check()", "outputs": outputs}


def _error(name):
    return {"output_type": "error", "ename": name, "evalue": "", "traceback": []}


def test_the_callbacks_page_opens_with_the_protocol(tmp_path):
    _api_pages(tmp_path)
    page = (tmp_path / "callbacks.md").read_text(encoding="utf-8")
    assert API_INTROS["callbacks"] == "companion.callbacks"
    assert ".. automodule:: companion.callbacks\n   :no-members:" in page
    intro, classes = page.split(".. autoclass:: EarlyStopping")
    assert intro.rstrip().endswith(".. currentmodule:: companion")  # names stay companion.NAME
    assert "on_fit_start(state)" in companion.callbacks.__doc__


def test_clean_drops_only_the_stubs_not_implemented_errors_and_widget_views():
    widget = {
        "output_type": "display_data",
        "data": {"application/vnd.jupyter.widget-view+json": {}, "text/plain": "10/10"},
        "metadata": {},
    }
    nb = {
        "cells": [
            _test_cell([_error("NotImplementedError")]),
            _cell("code", "x", outputs=[widget]),
        ],
        "metadata": {"widgets": {"state": {}}},
    }
    _clean(nb, "01-x")
    assert nb["cells"][0]["outputs"] == []
    assert nb["cells"][1]["outputs"][0]["data"] == {"text/plain": "10/10"}
    assert "widgets" not in nb["metadata"]


@pytest.mark.parametrize(
    "cell",
    [
        _test_cell([_error("AssertionError")]),
        _cell("code", "x", outputs=[_error("NotImplementedError")]),
    ],
    ids=["a test cell failing otherwise", "a demo cell"],
)
def test_clean_refuses_a_chapter_whose_cells_fail_otherwise(cell):
    with pytest.raises(BookError, match="01-x cell 1"):
        _clean({"cells": [cell], "metadata": {}}, "01-x")


def test_annotate_links_the_notebook_and_each_companion_name_once():
    nb = {
        "cells": [
            _cell("markdown", "# 1 · Title"),
            _cell("code", "h = companion.fit(m)\ncompanion.fit(m); companion.evaluate(m)"),
            _cell("code", "companion.not_a_name(1)"),
        ]
    }
    used = _annotate(nb, "01-x", _api_names())
    assert used == ["fit", "evaluate"]
    assert "{download}`01-x.ipynb <notebooks/01-x.ipynb>`" in nb["cells"][1]["source"]
    last = nb["cells"][-1]["source"]
    assert "{py:obj}`companion.fit` (Training loop)" in last
    assert last.count("companion.fit") == 1 and "not_a_name" not in last


def test_the_home_page_takes_the_chapter_table_from_the_readme():
    text = _home(ROOT / "README.md", [("04-training-loop", "4 · Models and the loop")])
    assert "[4 · Models and the loop](chapters/04-training-loop.ipynb)" in text
    assert "checkpoint so a resumed run equals an uninterrupted one" in text  # README's row 4
    assert "make lab" in text and "chapters/04-training-loop" in text


def test_check_links_finds_missing_files_and_anchors(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "index.html").write_text(
        '<a href="a/page.html#here">ok</a><a href="a/page.html#gone">x</a>'
        '<img src="missing.png"><a href="https://example.org/x">ext</a><a href="#top">t</a>'
        '<div id="top"></div>'
    )
    (tmp_path / "a" / "page.html").write_text('<h1 id="here">h</h1><a href="../index.html">up</a>')
    (tmp_path / "_static").mkdir()  # a theme's template fragment is not a page
    (tmp_path / "_static" / "macros.html").write_text("<script src=\"{{ pathto('x.js', 1) }}\">")
    broken = check_links(tmp_path)
    assert broken == [
        "index.html: a/page.html#gone (no such anchor)",
        "index.html: missing.png (no such file)",
    ]


def test_page_text_and_the_leak_scan_find_a_solution_line_in_highlighted_html(tmp_path):
    course = Course(ROOT / "course")
    secret = next(line for line in course_secrets(course) if "=" in line and len(line) > 20)
    # Pygments wraps each token in a span and escapes the markup: the scan reads the text
    spans = "".join(f'<span class="n">{c}</span>' for c in secret.replace("<", "&lt;"))
    page = tmp_path / "p.html"
    page.write_text(f"<html><script>var CANARY = 1;</script><pre>  {spans}\n</pre></html>")
    text = page_text(page)
    assert "CANARY" not in text  # scripts are not the page's text
    leaks = leak_scan_text(course, {"p.html": text})
    assert len(leaks) == 1 and "solutions or hidden tests" in leaks[0]
    assert leak_scan_text(course, {"q.html": "print('hello')"}) == []


def test_build_refuses_without_released_notebooks_and_says_how(tmp_path):
    course = Course(ROOT / "course")
    with pytest.raises(BookError, match="autograder release"):
        build_book(course, tmp_path / "nothing", tmp_path / "out")
    with pytest.raises(BookError, match="jobs must be a positive int, got 0"):
        build_book(course, ROOT / "notebooks", tmp_path / "out", jobs=0)


def test_the_book_extra_is_installed_by_setup_and_listed_for_conda():
    makefile = (ROOT / "Makefile").read_text()
    assert "'.[course,book,dev]'" in makefile
    assert 'book "$(BIN)/python -m autograder book --out build/book"' in makefile
