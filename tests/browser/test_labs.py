"""The two labs: the learner's (``make lab``: Validate only, quiet) and the instructor's
(``make instructor``: the course source with all of nbgrader)."""

from __future__ import annotations

import re
import shutil

import pytest

from ._lab import INSTRUCTOR_CONFIG, LEARNER_CONFIG, ROOT, LabServer

INSTRUCTOR_PLUGINS = [
    "@jupyter/nbgrader:menu",
    "@jupyter/nbgrader:formgrader",
    "@jupyter/nbgrader:create-assignment",
    "@jupyter/nbgrader:assignment-list",
    "@jupyter/nbgrader:course-list",
]
VALIDATE_PLUGIN = "@jupyter/nbgrader:validate-assignment"
_STARTED = "Use Control-C to stop this server"


def _recipe(makefile: str, target: str) -> str:
    return re.search(rf"^{target}:.*?(?=^\S|\Z)", makefile, re.M | re.S).group(0)


def test_the_tests_start_the_labs_as_the_makefile_does():
    """tests/browser/_lab.py copies these settings: keep the two in step."""
    makefile = (ROOT / "Makefile").read_text()
    learner = re.search(r"^LEARNER_CONFIG := (.*)$", makefile, re.M).group(1).split(":")
    instructor = re.search(r"^INSTRUCTOR_CONFIG := (.*)$", makefile, re.M).group(1).split(":")
    as_paths = [p.replace("$(CURDIR)", str(ROOT)) for p in learner]
    assert as_paths == [str(p) for p in LEARNER_CONFIG]
    assert [p.replace("$(CURDIR)", str(ROOT)) for p in instructor] == [
        str(p) for p in INSTRUCTOR_CONFIG
    ]
    lab = _recipe(makefile, "lab")
    assert "release --quiet --trust --lang $(EDITION)" in lab
    assert "--ServerApp.root_dir=$(EDITION_NOTEBOOKS)" in lab
    assert "$(LEARNER_CONFIG)" in lab
    instructor_recipe = _recipe(makefile, "instructor")
    assert "cd course" in instructor_recipe and "$(INSTRUCTOR_CONFIG)" in instructor_recipe
    assert "mkdir -p course/exchange" in instructor_recipe


def test_validate_in_the_learners_lab_reads_the_course_limits(monkeypatch):
    """Validate's server handler loads nbgrader_config.py from the server's folder and the config
    path: under make lab, lab/learner's, with the course's per-cell limit (not nbgrader's 30 s)."""
    from nbgrader.apps import NbGrader
    from traitlets.config.loader import PyFileConfigLoader

    monkeypatch.setenv("JUPYTER_CONFIG_PATH", ":".join(str(p) for p in LEARNER_CONFIG))
    monkeypatch.chdir(ROOT)  # where make lab starts the server
    app = NbGrader()
    app.load_config_file()
    course = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT / "course")).load_config()
    assert app.config.Execute.timeout == course.Execute.timeout >= 120
    assert app.config.Execute.interrupt_on_timeout is True
    assert "CourseDirectory" not in app.config  # the learner's lab has no course directory


@pytest.mark.requires_browser
def test_learner_lab_offers_validate_only(learner_lab, lab_page):
    disabled = learner_lab.page_config().get("disabledExtensions", [])
    assert sorted(p for p in disabled if "nbgrader" in p) == sorted(INSTRUCTOR_PLUGINS)
    shown = lab_page.evaluate(
        """(plugins) => ({
          menus: [...document.querySelectorAll('#jp-MainMenu .lm-MenuBar-itemLabel')]
                   .map(e => e.textContent),
          active: plugins.filter(p => window.jupyterapp.isPluginActivated(p)),
          commands: window.jupyterapp.commands.listCommands().filter(c => c.startsWith('nbgrader')),
        })""",
        [*INSTRUCTOR_PLUGINS, VALIDATE_PLUGIN],
    )
    assert "Run" in shown["menus"] and "Nbgrader" not in shown["menus"]
    assert shown["active"] == [VALIDATE_PLUGIN]  # no formgrader, no Create Assignment sidebar
    assert shown["commands"] == []
    assert learner_lab.get("/formgrader")[0] == 404  # the server extensions are off too
    assert learner_lab.get("/assignments")[0] == 404
    status, body = learner_lab.get("/nbgrader_version?version=0")  # Validate's own check
    assert status == 200 and "success" in body


@pytest.mark.requires_browser
def test_learner_lab_starts_without_warnings(learner_lab):
    assert learner_lab.release_output == "", "make lab's release step printed something"
    log = learner_lab.log_text()
    started = log.find(_STARTED)
    assert started > 0, f"the lab never said it was running:\n{learner_lab.tail()}"
    trouble = learner_lab.trouble(0, started)
    assert not trouble, "the learner's lab printed while starting:\n" + "\n".join(trouble)
    assert "nbgrader_config.py" not in log and "course directory root" not in log


@pytest.fixture
def instructor_lab(tmp_path_factory):
    """``make instructor`` on a copy of course/ (the formgrader writes its gradebook there)."""
    home = tmp_path_factory.mktemp("instructor-lab")
    course = home / "course"
    shutil.copytree(
        ROOT / "course",
        course,
        ignore=shutil.ignore_patterns(
            "gradebook.db", "release", "submitted", "autograded", "exchange"
        ),
    )
    (course / "exchange").mkdir(exist_ok=True)  # as the Makefile's recipe does
    server = LabServer(course, course, INSTRUCTOR_CONFIG, home)
    try:
        server.start()
        yield server
    finally:
        leftovers = server.stop()
        assert not leftovers, f"processes left running after the lab stopped: {leftovers}"


@pytest.mark.requires_browser
def test_instructor_lab_has_the_formgrader(instructor_lab, browser, artifacts):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(120_000)
    try:
        page = context.new_page()
        page.goto(f"{instructor_lab.url}/lab?token={instructor_lab.token}", timeout=180_000)
        menu = page.locator("#jp-MainMenu .lm-MenuBar-itemLabel", has_text="Nbgrader")
        menu.wait_for(timeout=180_000)
        menu.click()
        page.get_by_role("menuitem", name="Formgrader", exact=True).first.click()
        frame = page.frame_locator("iframe").first
        chapters = [c.name for c in sorted((ROOT / "course" / "source").iterdir()) if c.is_dir()]
        frame.locator("body", has_text=chapters[0]).wait_for(timeout=180_000)
        listed = frame.locator("body").inner_text()
        page.screenshot(path=str(artifacts / "instructor-formgrader.png"))
    finally:
        context.close()
    missing = [c for c in chapters if c not in listed]
    assert not missing, f"the formgrader does not list {missing}"
    trouble = instructor_lab.trouble(0)
    assert not trouble, "the instructor's lab printed:\n" + "\n".join(trouble)
