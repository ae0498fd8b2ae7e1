"""Fixtures of the browser suite: the learner's lab, a headless Chromium, and artifacts.

The lab is started as ``make lab`` starts it (``tests/browser/_lab.py``) on a fresh release of
every chapter (``python -m autograder release`` into a temporary folder, then ``make lab``'s own
``release --quiet --trust``), with ``COURSE_FAST=1`` for its kernels. Beside each chapter,
``solved/NN-name.ipynb`` is the same released notebook with the reference solutions written in,
as a learner who got everything right would have it.

The Chinese edition is released beside them, in ``zh/`` (``release --lang zh``).

Screenshots, the lab's log and the timings go to ``artifacts/browser/`` (git-ignored; CI keeps it).
"""

from __future__ import annotations

import json
import shutil

import pytest

from autograder.course import (
    BEGIN_SOLUTION,
    END_SOLUTION,
    Course,
    cell_grade_id,
    cell_source,
    is_solution_cell,
)

from ._lab import LEARNER_CONFIG, ROOT, LabServer, chromium

ARTIFACTS = ROOT / "artifacts" / "browser"
# As the brief for CI machines says: no GPU, no background traffic (the network is closed).
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-quic",
]
TIMINGS: dict[str, dict[str, float]] = {}


def solved_notebook(stub: dict, source: dict) -> dict:
    """The released ``stub`` with each solution cell replaced by the source's solution.

    The solution region's markers are dropped and its lines kept, so the cell reads as a learner's
    answer would; the test cells stay exactly as released (their checksums still match).
    """
    answers = {cell_grade_id(c): cell_source(c) for c in source["cells"] if is_solution_cell(c)}
    solved = json.loads(json.dumps(stub))
    for cell in solved["cells"]:
        gid = cell_grade_id(cell)
        if gid in answers:
            lines = answers[gid].split("\n")
            kept = [
                ln
                for ln in lines
                if ln.strip() not in (f"### {BEGIN_SOLUTION}", f"### {END_SOLUTION}")
            ]
            cell["source"] = "\n".join(kept)
    return solved


@pytest.fixture(scope="session")
def artifacts():
    if ARTIFACTS.exists():
        shutil.rmtree(ARTIFACTS)
    ARTIFACTS.mkdir(parents=True)
    yield ARTIFACTS
    (ARTIFACTS / "timings.json").write_text(json.dumps(TIMINGS, indent=1, sort_keys=True) + "\n")


@pytest.fixture(scope="session")
def learner_lab(tmp_path_factory, artifacts):
    """The learner's lab (``make lab``) serving a fresh release of every chapter."""
    home = tmp_path_factory.mktemp("learner-lab")
    notebooks = home / "notebooks"
    server = LabServer(notebooks, ROOT, LEARNER_CONFIG, home, env={"COURSE_FAST": "1"})
    for args in (
        ["release", "--notebooks", str(notebooks)],  # a fresh clone's notebooks/
        ["release", "--quiet", "--trust", "--notebooks", str(notebooks)],  # what make lab runs
        # the Chinese edition (make lab LANG=zh), in a folder of the same lab
        ["release", "--quiet", "--trust", "--lang", "zh", "--notebooks", str(notebooks / "zh")],
    ):
        done = server.run("-m", "autograder", *args)
        assert done.returncode == 0, f"autograder {' '.join(args)} failed:\n{done.stderr}"
    (notebooks / "solved").mkdir()
    course = Course(ROOT / "course")
    for chapter in course.chapters():
        stub_path = notebooks / chapter.released_name
        stub = json.loads(stub_path.read_text(encoding="utf-8"))
        solved = solved_notebook(stub, chapter.read_source())
        (notebooks / "solved" / chapter.released_name).write_text(json.dumps(solved, indent=1))
    # A learner's saved notebook is signed by JupyterLab when it saves; these are written here.
    solved_paths = [str(p) for p in sorted((notebooks / "solved").glob("*.ipynb"))]
    signed = server.run("-m", "jupyter", "trust", *solved_paths)
    assert signed.returncode == 0, signed.stderr
    server.release_output = done.stdout + done.stderr
    try:
        server.start()
        yield server
    finally:
        leftovers = server.stop()
        if server.log_path.exists():
            shutil.copy(server.log_path, artifacts / "jupyter-lab.log")
        assert not leftovers, f"processes left running after the lab stopped: {leftovers}"


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(
            executable_path=chromium(), args=CHROMIUM_ARGS, timeout=120_000
        )
        try:
            yield instance
        finally:
            instance.close()


class Console:
    """The browser console's errors and the page's uncaught exceptions, in order."""

    def __init__(self, page):
        self.entries: list[str] = []
        page.on("console", self._message)
        page.on("pageerror", lambda err: self.entries.append(f"uncaught: {err}"))

    def _message(self, message) -> None:
        if message.type == "error":
            where = message.location.get("url", "") if message.location else ""
            self.entries.append(f"console.error: {message.text} ({where})")

    def since(self, start: int) -> list[str]:
        return self.entries[start:]


@pytest.fixture(scope="session")
def lab_page(browser, learner_lab):
    """One browser tab with the learner's lab loaded, shared by the chapters (as a learner's)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(60_000)
    page = context.new_page()
    page.console = Console(page)
    page.goto(f"{learner_lab.url}/lab?token={learner_lab.token}", timeout=180_000)
    page.wait_for_function(
        "() => window.jupyterapp && window.jupyterapp.shell && "
        "document.querySelector('.jp-DirListing-content')",
        timeout=180_000,
    )
    try:
        yield page
    finally:
        context.close()
