"""Check in the learner's lab, as a learner uses it: write, Check, ask for a hint, fix, Check.

Chapter 4 in the English lab: a residual block with a typical mistake (a convolution's bias left
in before batch norm: right in train mode, wrong in eval mode, so the visible test passes), the
Check button under its tests, the feedback naming the mistake within the time target, a hint
giving the contract clause, the fix, full points, and the progress summary. Then one exercise in
the Chinese lab. The code typed in is the corpus's (tests/course/submissions/04/), so the words
the feedback must contain are the ones grading is proved to give.
"""

from __future__ import annotations

import json
import time

import pytest

from tests.course.corpus import ROOT as CORPUS
from tests.course.corpus import parse

from ._ui import close_current, open_notebook

pytestmark = pytest.mark.requires_browser

CHAPTER = "04-training-loop.ipynb"
# The first check of a chapter pays for a kernel started for it; a warm one is the target (15 s
# for every exercise quiet, as benchmarks/check.py measures); a loaded CI machine gets slack.
FIRST_CHECK_S = 120
CHECK_S = 60

_SET_AND_RUN = """async ([gradeId, code]) => {
  const app = window.jupyterapp;
  const panel = app.shell.currentWidget;
  const notebook = panel.content;
  const index = notebook.widgets.findIndex(
    c => (c.model.getMetadata('nbgrader') ?? {}).grade_id === gradeId);
  if (index < 0) return -1;
  if (code !== null) notebook.widgets[index].model.sharedModel.setSource(code);
  notebook.activeCellIndex = index;
  notebook.deselectAll();
  await app.commands.execute('notebook:run-cell');
  return index;
}"""

_RUN_FIRST_CODE_CELL = """async () => {
  const app = window.jupyterapp;
  const notebook = app.shell.currentWidget.content;
  const index = notebook.widgets.findIndex(c => c.model.type === 'code');
  notebook.activeCellIndex = index;
  notebook.deselectAll();
  await app.commands.execute('notebook:run-cell');
  return index;
}"""

_IDLE = """() => {
  const k = window.jupyterapp.shell.currentWidget.sessionContext.session?.kernel;
  return !!k && k.status === 'idle';
}"""


def _answer(name: str, grade_id: str):
    sub = parse(CORPUS / "04" / name)
    return sub.exercises[grade_id]


def _run(page, grade_id: str, code: str | None) -> int:
    index = page.evaluate(_SET_AND_RUN, [grade_id, code])
    assert index >= 0, f"no cell with grade_id {grade_id} in the notebook"
    page.wait_for_timeout(300)
    page.wait_for_function(_IDLE, timeout=180_000, polling=250)
    return index


def _panel(page, test_index: int):
    cell = page.locator(f".jp-Notebook .jp-Cell >> nth={test_index}")
    panel = cell.locator(".autograder-panel")
    panel.wait_for(timeout=60_000)
    return panel


def _click_check(panel, limit_s: float) -> tuple[str, float]:
    start = time.monotonic()
    panel.locator(".autograder-check-button").click()
    panel.locator(".autograder-check").wait_for(timeout=limit_s * 1000)
    return panel.locator(".autograder-check").inner_text(), time.monotonic() - start


def test_check_hint_fix_and_progress_in_the_learners_lab(lab_page, learner_lab, artifacts):
    page = lab_page
    open_notebook(page, CHAPTER)
    page.evaluate(_RUN_FIRST_CODE_CELL)
    page.wait_for_function(_IDLE, timeout=180_000, polling=250)
    mistake = _answer("mistake_residual_bias_before_norm.py", "ch04_residual_block")
    correct = _answer("_base.py", "ch04_residual_block")

    _run(page, "ch04_residual_block", mistake.code)
    test_index = _run(page, "ch04_residual_block_tests", None)
    panel = _panel(page, test_index)
    text, first_s = _click_check(panel, FIRST_CHECK_S)
    assert "0 / 3" in text, text
    assert mistake.feedback in text, f"the feedback does not name the mistake:\n{text}"
    page.screenshot(path=str(artifacts / "check-feedback.png"), full_page=False)

    panel.locator(".autograder-hint-button").click()
    clause = panel.locator(".hint-1").first
    clause.wait_for(timeout=10_000)
    said = clause.inner_text()
    assert "contract clause" in said and len(said) > len("The contract clause this breaks: ") + 20
    assert panel.locator(".hint-2").count() == 0  # one step at a time
    panel.locator(".autograder-hint-button").click()
    panel.locator(".hint-2 a").first.wait_for(timeout=10_000)  # the section, as a link
    page.screenshot(path=str(artifacts / "check-hints.png"), full_page=False)

    _run(page, "ch04_residual_block", correct.code)  # the fix, run (not saved)
    text, warm_s = _click_check(panel, CHECK_S)
    assert "3 / 3" in text, text
    assert warm_s < CHECK_S
    row = panel.locator(".progress-row[data-exercise='residual_block']")
    assert "3 / 3" in row.inner_text()
    page.screenshot(path=str(artifacts / "check-fixed.png"), full_page=False)

    record = json.loads((learner_lab.root_dir / "progress.json").read_text(encoding="utf-8"))
    entry = record["chapters"]["04-training-loop"]["residual_block"]
    assert entry["best"] == 3 and entry["checks"] == 2 and entry["hints"] == 2, entry

    panel.locator(".autograder-progress-button").click()  # the whole course, every chapter
    panel.locator(".autograder-progress", has_text="09-capstone").wait_for(timeout=10_000)
    print(f"check: first {first_s:.1f} s (kernel started for the chapter), warm {warm_s:.1f} s")
    close_current(page)


def test_check_in_the_chinese_lab(lab_page, artifacts):
    page = lab_page
    open_notebook(page, f"zh/{CHAPTER}")
    page.evaluate(_RUN_FIRST_CODE_CELL)
    page.wait_for_function(_IDLE, timeout=180_000, polling=250)
    _run(page, "ch04_load_unwrapped", None)  # the stub, as released
    test_index = _run(page, "ch04_load_unwrapped_tests", None)
    panel = _panel(page, test_index)
    assert panel.locator(".autograder-check-button").inner_text().strip() == "检查"
    text, _ = _click_check(panel, FIRST_CHECK_S)
    assert "已用隐藏测试检查 load_unwrapped" in text and "0 / 2" in text, text
    page.screenshot(path=str(artifacts / "check-zh.png"), full_page=False)
    close_current(page)
