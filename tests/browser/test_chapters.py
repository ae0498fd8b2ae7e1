"""Every released chapter in JupyterLab, as a learner meets it, in headless Chromium.

Per chapter, one pass through the learner's lab (``make lab``; kernels in ``COURSE_FAST=1``):
open the fresh notebook (it must open unmodified), Run All from the menu, read every cell, press
Validate; then open the same notebook with the reference solutions written in and press Validate.
The tests below each check one property of that pass:

- the notebook opens without being marked modified;
- Run All reaches the last cell;
- errors appear only in the tests of exercises not attempted yet, and each of those shows one;
- every figure renders as an image, and every cell that calls ``plt.show()`` at its top level
  shows one;
- progress widgets render where a cell shows one, and every training run shows one;
- the browser console has no errors, and the lab's terminal no warnings;
- Validate passes the reference solutions; on chapter 4's stub (five exercises) it lists every
  exercise's test as failing. Validating the other stubs would add eight chapter executions to
  the slowest part of CI and prove nothing new: nbgrader's Validate takes the same path for every
  chapter, Run All above shows that each chapter's tests fail on the stub with
  NotImplementedError only, and ``autograder verify`` grades every stub to zero.

Screenshots of each chapter's top, a figure and an exercise go to ``artifacts/browser/``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pytest

from . import _ui
from ._lab import ROOT
from .conftest import TIMINGS

pytestmark = pytest.mark.requires_browser

STUB_VALIDATED = "04-training-loop"  # see the module docstring

CHAPTERS = sorted(p.name for p in (ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))
_WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
_IMAGE_MIMES = ("image/png", "image/jpeg", "image/svg+xml")
_TRAINING_RUN = re.compile(r"\bcompanion\.fit\(")
_SHOWS_FIGURE = re.compile(r"^plt\.show\(\)", re.M)  # unconditionally: not inside an if
_TEXT_BAR = re.compile(r"\d+%\|")  # tqdm's text bar: what a notebook shows when widgets fail


@dataclass
class Pass:
    """Everything one chapter's pass through the lab recorded."""

    name: str
    opened: _ui.Opened
    ran: _ui.RunAll
    stub: _ui.Validation | None
    solved: _ui.Validation
    console: list[str] = field(default_factory=list)
    terminal: list[str] = field(default_factory=list)


@pytest.fixture(scope="module", params=CHAPTERS, ids=[c.removesuffix(".ipynb") for c in CHAPTERS])
def chapter(request, learner_lab, lab_page, artifacts) -> Pass:
    name, page = request.param, lab_page
    stem = name.removesuffix(".ipynb")
    console_start, log_start = len(page.console.entries), len(learner_lab.log_text())
    try:
        opened = _ui.open_notebook(page, name)
        ran = _ui.run_all(page)
        _screenshots(page, ran.cells, artifacts, stem)
        stub = _ui.validate(page, opened.panel_id) if stem == STUB_VALIDATED else None
        _ui.close_current(page)
        solved_opened = _ui.open_notebook(page, f"solved/{name}")
        solved = _ui.validate(page, solved_opened.panel_id)
        _ui.close_current(page)
    except Exception:
        page.screenshot(path=str(artifacts / f"{stem}-failure.png"))
        raise
    TIMINGS[stem] = {
        "open_s": round(opened.seconds, 1),
        "run_all_s": round(ran.seconds, 1),
        "validate_stub_s": round(stub.seconds, 1) if stub else None,
        "validate_solved_s": round(solved.seconds, 1),
    }
    return Pass(
        stem,
        opened,
        ran,
        stub,
        solved,
        console=page.console.since(console_start),
        terminal=learner_lab.trouble(log_start),
    )


def _screenshots(page, cells: list[dict], folder, stem: str) -> None:
    """The chapter's top, its first figure and its first exercise, as a learner sees them."""
    _ui.scroll_to(page, 0)
    page.screenshot(path=str(folder / f"{stem}-top.png"))
    figure = next((c for c in cells if c["images_shown"]), None)
    if figure is not None:
        _ui.scroll_to(page, figure["index"], "center")
        page.locator(f'[data-test-cell="{figure["index"]}"] .jp-OutputArea').first.screenshot(
            path=str(folder / f"{stem}-figure.png")
        )
    test = next((c for c in cells if c["nbgrader"].get("grade")), None)
    if test is not None:  # the end of the first stub, and its test marking it not attempted
        _ui.scroll_to(page, test["index"], "end")
        page.screenshot(path=str(folder / f"{stem}-exercise.png"))


def _tests(cells: list[dict]) -> list[dict]:
    return [c for c in cells if c["type"] == "code" and c["nbgrader"].get("grade")]


def _errors(cell: dict) -> list[dict]:
    return [o for o in cell["outputs"] if o["type"] == "error"]


def _first_line(source: str) -> str:
    return source.strip().splitlines()[0] if source.strip() else ""


def test_opens_unmodified(chapter):
    assert not chapter.opened.dirty_after_open and not chapter.opened.tab_marked_dirty, (
        f"{chapter.name} is marked modified as soon as it opens: its language_info or kernelspec "
        "differs from what the kernel reports (re-release it with this Python)"
    )


def test_run_all_reaches_the_end(chapter):
    ran = chapter.ran
    if not ran.finished:
        stopped = [
            f"cell {c['index']}: {e['ename']}: {e['evalue']}"
            for c in ran.cells
            for e in _errors(c)
            if "raises-exception" not in c["tags"]
        ]
        pytest.fail(
            f"Run All ran {ran.executed} of {ran.total} code cells in {ran.seconds:.0f} s; "
            f"stopped by: {stopped or 'nothing visible (timeout?)'}",
            pytrace=False,
        )


def test_errors_only_in_tests_of_unattempted_exercises(chapter):
    problems = []
    for cell in chapter.ran.cells:
        if cell["type"] != "code":
            continue
        is_test = bool(cell["nbgrader"].get("grade"))
        for error in _errors(cell):
            if not is_test or error["ename"] != "NotImplementedError":
                where = "a test" if is_test else "a cell that is not a test"
                problems.append(
                    f"cell {cell['index']} ({where}, {_first_line(cell['source'])[:60]!r}): "
                    f"{error['ename']}: {error['evalue']}"
                )
    unmarked = [
        cell["nbgrader"].get("grade_id")
        for cell in _tests(chapter.ran.cells)
        if cell["count"] is not None and not _errors(cell)
    ]
    if unmarked:
        problems.append(
            f"the tests of {unmarked} pass on the stub, so nothing marks those exercises as not "
            "attempted yet: their visible tests should call the learner's function"
        )
    assert not problems, f"{chapter.name} after Run All:\n" + "\n".join(problems)


def test_figures_render_as_images(chapter):
    problems, figures = [], 0
    for cell in chapter.ran.cells:
        wanted = sum(1 for o in cell["outputs"] if any(m in o["mimes"] for m in _IMAGE_MIMES))
        figures += wanted
        if cell["images_shown"] < wanted or cell["images_broken"]:
            problems.append(
                f"cell {cell['index']}: {wanted} image outputs, {cell['images_shown']} shown, "
                f"{cell['images_broken']} broken"
            )
        if _SHOWS_FIGURE.search(cell["source"]) and cell["count"] is not None and not wanted:
            problems.append(f"cell {cell['index']} calls plt.show() but shows no figure")
    assert not problems, f"{chapter.name}: figures that do not render:\n" + "\n".join(problems)
    if not figures:
        pytest.skip(f"{chapter.name} draws no figure")


def test_progress_widgets_render(chapter):
    problems = []
    for cell in chapter.ran.cells:
        widgets = sum(1 for o in cell["outputs"] if _WIDGET_MIME in o["mimes"])
        streams = "".join(o["text"] for o in cell["outputs"] if o["type"] == "stream")
        where = f"cell {cell['index']} ({_first_line(cell['source'])[:50]!r})"
        if cell["nbgrader"].get("grade") and cell["count"] is not None:
            # a test cell: its one widget is the Check panel (autograder/inlab.py), shown
            if cell["panels_shown"] != 1 or cell["widget_errors"]:
                problems.append(f"{where}: no Check panel under the tests after they ran")
            widgets -= 1
        if widgets and (cell["widgets_shown"] < 1 or cell["widget_errors"]):
            problems.append(f"{where}: {widgets} widget outputs, none rendered as a progress bar")
        if "IProgress not found" in streams or _TEXT_BAR.search(streams):
            problems.append(f"{where}: a text progress bar: ipywidgets is missing in the kernel")
        source = cell["source"]
        writes_a_file = source.lstrip().startswith("%%writefile")  # its code runs elsewhere
        training = (
            _TRAINING_RUN.search(source) and "progress=False" not in source and not writes_a_file
        )
        if training and cell["count"] is not None and not widgets:
            problems.append(f"{where}: a training run without a progress widget")
    assert not problems, f"{chapter.name}:\n" + "\n".join(problems)


def test_browser_console_has_no_errors(chapter):
    assert not chapter.console, f"{chapter.name}: browser console errors:\n" + "\n".join(
        chapter.console
    )


def test_terminal_prints_no_warnings(chapter):
    assert not chapter.terminal, (
        f"{chapter.name}: the lab's terminal printed, while it ran (log in artifacts/browser/):\n"
        + "\n".join(chapter.terminal)
    )


def test_validate_fails_the_stub_on_every_exercise(chapter):
    stub = chapter.stub
    if stub is None:
        pytest.skip(f"the stub's Validate is checked on {STUB_VALIDATED} (module docstring)")
    assert stub.kind == "validation-failed", (
        f"{chapter.name}: Validate on the fresh notebook says {stub.kind!r}:\n{stub.text[:2000]}"
    )
    tests = {_first_line(c["source"]): c["nbgrader"]["grade_id"] for c in _tests(chapter.ran.cells)}
    listed = {tests.get(_first_line(s), _first_line(s)) for s in stub.failed_sources}
    missing = sorted(set(tests.values()) - listed)
    assert not missing, f"{chapter.name}: Validate does not list the tests of {missing}"
    assert all("NotImplementedError" in e for e in stub.failed_errors), (
        f"{chapter.name}: a stub fails for another reason than NotImplementedError:\n"
        + "\n".join(stub.failed_errors)[:3000]
    )


def test_validate_passes_the_reference_solutions(chapter):
    solved = chapter.solved
    assert solved.kind == "validation-success", (
        f"{chapter.name}: Validate on the reference solutions says {solved.kind!r}:\n"
        f"{solved.text[:3000]}"
    )
