"""The Chinese edition in JupyterLab: a chapter opened, run to the end, and its Chinese rendered.

Chapter 3 (``zh/03-tensors-autograd.ipynb`` in the learner's lab, released with ``--lang zh``)
has prose, exercises and figures with Chinese labels. The page must draw its Chinese text with a
font that has the glyphs: Chromium reports the platform fonts it used for a node
(``CSS.getPlatformFontsForNode``), so a page of empty boxes fails. The figures must be drawn
without matplotlib's "Glyph ... missing" warning.
"""

from __future__ import annotations

import re

import pytest

from . import _ui

pytestmark = pytest.mark.requires_browser

CHAPTER = "zh/03-tensors-autograd.ipynb"
CJK = re.compile(r"[\u4e00-\u9fff]")
CJK_FONT = re.compile(r"CJK|Hei|Song|Ming|Noto Sans SC|Source Han|WenQuanYi|PingFang|YaHei", re.I)


@pytest.fixture(scope="module")
def chinese(lab_page, artifacts):
    page = lab_page
    opened = _ui.open_notebook(page, CHAPTER)
    ran = _ui.run_all(page)
    _ui.scroll_to(page, 0)
    page.screenshot(path=str(artifacts / "zh-03-top.png"))
    figure = next((c for c in ran.cells if c["images_shown"]), None)
    if figure is not None:
        _ui.scroll_to(page, figure["index"], "center")
        page.locator(f'[data-test-cell="{figure["index"]}"] .jp-OutputArea').first.screenshot(
            path=str(artifacts / "zh-03-figure.png")
        )
    fonts = _fonts_of_first_chinese_paragraph(page)
    _ui.close_current(page)
    return opened, ran, fonts


def _fonts_of_first_chinese_paragraph(page) -> list[dict]:
    """The platform fonts Chromium used to draw the first rendered paragraph with Chinese in it."""
    page.evaluate(
        """() => {
        const p = [...document.querySelectorAll('.jp-MarkdownOutput p')]
          .find(e => /[\\u4e00-\\u9fff]/.test(e.innerText));
        if (p) { p.setAttribute('data-test-zh', '1'); p.scrollIntoView(); }
    }"""
    )
    cdp = page.context.new_cdp_session(page)
    try:
        cdp.send("DOM.enable")
        cdp.send("CSS.enable")
        root = cdp.send("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
        node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": "[data-test-zh]"})
        if not node.get("nodeId"):
            return []
        return cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node["nodeId"]})["fonts"]
    finally:
        cdp.detach()


def test_the_chinese_chapter_runs_to_the_end(chinese):
    opened, ran, _ = chinese
    assert not opened.dirty_after_open
    assert ran.finished, f"Run All ran {ran.executed} of {ran.total} code cells"
    for cell in ran.cells:
        for output in cell["outputs"]:
            if output["type"] == "error":  # only the stubs' tests, as in the English chapter
                assert cell["nbgrader"].get("grade"), f"cell {cell['index']}: {output['ename']}"
                assert output["ename"] == "NotImplementedError", output["evalue"]


def test_its_text_is_chinese(chinese):
    _, ran, _ = chinese
    markdown = [c["source"] for c in ran.cells if c["type"] == "markdown"]
    assert markdown and all(CJK.search(text) for text in markdown)
    printed = "".join(o["text"] for c in ran.cells for o in c["outputs"])
    assert CJK.search(printed), "no Chinese in any printout"


def test_chinese_text_is_drawn_with_a_font_that_has_the_glyphs(chinese):
    _, _, fonts = chinese
    assert fonts, "no rendered paragraph with Chinese text was found"
    used = [f for f in fonts if CJK_FONT.search(f["familyName"]) and f["glyphCount"] > 0]
    assert used, f"Chinese drawn without a CJK font (empty boxes): {fonts}"


def test_figures_render_with_chinese_labels_and_no_missing_glyphs(chinese):
    _, ran, _ = chinese
    assert any(c["images_shown"] for c in ran.cells), "no figure rendered"
    assert not any(c["images_broken"] for c in ran.cells)
    warnings = [
        o["text"][:120]
        for c in ran.cells
        for o in c["outputs"]
        if o["type"] == "stream" and "missing from font" in o["text"]
    ]
    assert not warnings, f"matplotlib had no font for the Chinese labels: {warnings}"
