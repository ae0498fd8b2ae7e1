"""autograder.release: stubs made by nbgrader, deterministic output, --check, learners' edits."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

import nbformat
import pytest

from autograder.__main__ import main
from autograder.course import Course
from autograder.release import release

from .fixture_course import REPO, build_course, load


@pytest.fixture
def fresh(tmp_path):
    course_dir, notebooks = build_course(tmp_path)
    return Course(course_dir), notebooks


def test_released_stub_has_no_solution_hidden_test_or_output(demo):
    _, notebooks, stub = demo
    text = (notebooks / "01-demo.ipynb").read_text()
    for secret in ("BEGIN SOLUTION", "HIDDEN TESTS", "CANARY", "running_total", "sample_values"):
        assert secret not in text
    codes = [c for c in stub["cells"] if c["cell_type"] == "code"]
    assert all(c["outputs"] == [] and c["execution_count"] is None for c in codes)
    sources = ["".join(c["source"]) for c in codes]
    assert sum("raise NotImplementedError()" in s for s in sources) == 3
    assert any("assert isinstance(add(1.0, 2.0), float)" in s for s in sources)
    assert any('"""Return the sum of a and b."""' in s for s in sources)  # the docstring stays
    assert stub["metadata"]["autograder"]["chapter"] == "01-demo"
    tests = [c for c in codes if c["metadata"].get("nbgrader", {}).get("grade")]
    assert all(c["metadata"]["editable"] is False for c in tests)


def test_release_is_deterministic_and_skips_unchanged_files(fresh):
    course, notebooks = fresh
    assert len(release(course, notebooks).written) == 2
    first = {p.name: p.read_bytes() for p in notebooks.glob("*.ipynb")}
    mtimes = {p.name: p.stat().st_mtime_ns for p in notebooks.glob("*.ipynb")}
    again = release(course, notebooks)
    assert again.written == [] and len(again.up_to_date) == 2
    assert {p.name: p.stat().st_mtime_ns for p in notebooks.glob("*.ipynb")} == mtimes
    shutil.rmtree(notebooks)
    release(course, notebooks)
    assert {p.name: p.read_bytes() for p in notebooks.glob("*.ipynb")} == first
    assert release(course, notebooks, check=True).in_sync


def test_check_names_stale_missing_and_extra_files(fresh, capsys):
    course, notebooks = fresh
    release(course, notebooks)
    source = course.chapter("01-demo").source
    nb = load(source)
    nb["cells"].append({"cell_type": "markdown", "id": "new", "metadata": {}, "source": "More."})
    source.write_text(json.dumps(nb, indent=1))
    (notebooks / "02-extra.ipynb").unlink()
    (notebooks / "99-old.ipynb").write_text("{}")
    report = release(course, notebooks, check=True)
    assert [p.name for p in report.stale] == ["01-demo.ipynb"]
    assert [p.name for p in report.missing] == ["02-extra.ipynb"]
    assert [p.name for p in report.extra] == ["99-old.ipynb"]
    args = ["release", "--check", "--course", str(course.root), "--notebooks", str(notebooks)]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "01-demo.ipynb" in err and "02-extra.ipynb" in err and "99-old.ipynb" in err
    assert main(args[:1] + args[2:] + ["--quiet"]) == 0
    assert capsys.readouterr().out == ""
    (notebooks / "99-old.ipynb").unlink()
    assert main(args) == 0


def test_learners_edits_are_kept_unless_forced(fresh):
    course, notebooks = fresh
    release(course, notebooks)
    target = notebooks / "01-demo.ipynb"
    work = load(target)
    work["cells"][3]["source"] = "def add(a, b):\n    return a + b  # my work\n"
    target.write_text(json.dumps(work, indent=1))
    quiet = release(course, notebooks)  # same source: the learner's copy is current
    assert quiet.messages == [] and quiet.up_to_date == [target, notebooks / "02-extra.ipynb"]
    assert not release(course, notebooks, check=True).in_sync  # but CI sees the edit
    source = course.chapter("01-demo").source
    nb = load(source)
    nb["cells"][0]["source"] = "# Chapter 1: a demo, revised"
    source.write_text(json.dumps(nb, indent=1))
    report = release(course, notebooks)
    assert report.stale == [target] and "my work" in target.read_text()
    assert "your work" in report.messages[0]
    forced = release(course, notebooks, force=True)
    assert forced.written == [target] and "my work" not in target.read_text()
    assert "my work" in forced.backups[0].read_text()
    assert forced.backups[0].parent == notebooks / "backup"
    assert release(course, notebooks, check=True).in_sync  # backups are not extra files


def test_released_notebook_is_ready_for_jupyterlab(demo):
    from autograder.lab import RUN_ALL_TAG, language_info

    _, _, stub = demo
    for cell in stub["cells"]:
        is_test = bool(cell["metadata"].get("nbgrader", {}).get("grade"))
        assert (RUN_ALL_TAG in cell["metadata"].get("tags", [])) == is_test
    assert stub["metadata"]["language_info"] == language_info()


def _run_all(nb: dict, tmp_path):
    """Execute like JupyterLab's Run All: stop at the first error unless its cell says otherwise."""
    from nbclient import NotebookClient

    node = nbformat.reads(json.dumps(nb), as_version=4)
    NotebookClient(node, timeout=60, kernel_name="python3", allow_errors=False).execute(
        cwd=str(tmp_path)
    )
    return node


def test_run_all_reaches_the_end_of_a_fresh_stub(demo, tmp_path):
    from nbclient.exceptions import CellExecutionError

    _, _, stub = demo
    ran = _run_all(stub, tmp_path)
    codes = [c for c in ran.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in codes)  # the last cell ran too
    errors = {
        c.metadata.get("nbgrader", {}).get("grade_id"): o.ename
        for c in codes
        for o in c.outputs
        if o.output_type == "error"
    }
    # Errors come only from tests; here only add's visible test calls the function (mean's only
    # checks callable(mean), scale's are all hidden), so it alone fails on the stub.
    assert errors == {"ch01_add_tests": "NotImplementedError"}
    untagged = json.loads(json.dumps(stub))
    for cell in untagged["cells"]:
        cell["metadata"].pop("tags", None)
    with pytest.raises(CellExecutionError, match="NotImplementedError"):
        _run_all(untagged, tmp_path)  # without the tag, Run All stops at the first test


def test_language_version_follows_the_python_that_releases(fresh):
    from autograder.lab import current_python
    from autograder.release import released_notebook

    course, notebooks = fresh
    release(course, notebooks)
    demo_nb, extra_nb = notebooks / "01-demo.ipynb", notebooks / "02-extra.ipynb"
    for path in (demo_nb, extra_nb):  # as released by a machine with another Python
        text = released_notebook(course, course.chapter(path.stem), python_version="3.0.1")
        path.write_text(text, encoding="utf-8")
    edited = load(extra_nb)
    edited["cells"][2]["source"] = "def double(x):\n    return 2 * x  # my work\n"
    extra_nb.write_text(json.dumps(edited, indent=1), encoding="utf-8")
    check = release(course, notebooks, check=True)
    assert check.stale == [extra_nb]  # the learner's edit, not the other Python, is the change
    report = release(course, notebooks)
    assert report.written == [demo_nb] and report.up_to_date == [extra_nb]
    assert load(demo_nb)["metadata"]["language_info"]["version"] == current_python()
    assert "my work" in extra_nb.read_text()  # a learner's notebook is never rewritten for it
    assert load(extra_nb)["metadata"]["language_info"]["version"] == "3.0.1"
    assert release(course, notebooks).written == []


def test_trust_signs_only_untouched_notebooks(fresh, tmp_path, monkeypatch, capsys):
    from nbformat.sign import NotebookNotary

    from autograder.release import trust_untouched

    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "jupyter-data"))  # the signature db
    course, notebooks = fresh
    release(course, notebooks)
    edited_path = notebooks / "02-extra.ipynb"
    edited = load(edited_path)
    edited["cells"][2]["source"] = "def double(x):\n    return 2 * x  # my work\n"
    edited_path.write_text(json.dumps(edited, indent=1), encoding="utf-8")
    args = ["release", "--quiet", "--trust", "--course", str(course.root)]
    assert main(args + ["--notebooks", str(notebooks)]) == 0
    assert capsys.readouterr().out == ""
    notary = NotebookNotary()
    assert notary.check_signature(nbformat.read(notebooks / "01-demo.ipynb", as_version=4))
    assert not notary.check_signature(nbformat.read(edited_path, as_version=4))
    assert trust_untouched(notebooks) == []  # signed once


def test_unchanged_release_is_quick_and_does_not_load_nbgrader(fresh):
    course, notebooks = fresh
    release(course, notebooks)
    code = (
        "import sys; from autograder.__main__ import main; "
        f"rc = main(['release', '--quiet', '--course', {str(course.root)!r}]); "
        "print(rc, 'nbgrader' in sys.modules, 'nbformat' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0", "False", "False"]


def _nbgrader_api(course_root, monkeypatch):
    """nbgrader's own Python API (what its CLI and formgrader call), configured by the course."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    # nbgrader's gradebook runs the `alembic` executable: the venv's bin folder must be on PATH.
    monkeypatch.setenv("PATH", f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.chdir(course_root)
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course_root)).load_config()
    return NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)


def _cells(nb: dict) -> list:
    return [(c["cell_type"], "".join(c["source"]), c["metadata"]) for c in nb["cells"]]


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:Object of type")  # SQLAlchemy, inside nbgrader's gradebook
def test_nbgrader_own_workflow_on_the_course(fresh, monkeypatch):
    """generate_assignment gives our cells; autograde scores a filled-in copy in the gradebook."""
    course, notebooks = fresh
    release(course, notebooks)
    api = _nbgrader_api(course.root, monkeypatch)
    done = api.generate_assignment("01-demo")
    assert done["success"], done.get("error")
    theirs = load(course.root / "release" / "01-demo" / "01-demo.ipynb")
    ours = load(notebooks / "01-demo.ipynb")
    assert _cells(theirs) == _cells(ours)
    submitted = course.root / "submitted" / "alice" / "01-demo"
    submitted.mkdir(parents=True)
    for index, code in (
        (3, "def add(a, b):\n    return a + b"),
        (6, "def mean(values):\n    return sum(values) / len(values)"),
        (9, "def scale(values, factor):\n    return [v * factor for v in values]"),
    ):
        theirs["cells"][index]["source"] = code
    (submitted / "01-demo.ipynb").write_text(json.dumps(theirs))
    done = api.autograde("01-demo", "alice")
    assert done["success"], done.get("error")
    from nbgrader.api import Gradebook

    with Gradebook(api.coursedir.db_url, api.coursedir.course_id) as gradebook:
        submission = gradebook.find_submission("01-demo", "alice")
        assert (submission.score, submission.max_score) == (6.0, 6.0)


@pytest.mark.slow
def test_nbgrader_generate_assignment_on_the_real_course(tmp_path, monkeypatch):
    if not (REPO / "course" / "source" / "04-training-loop").is_dir():
        pytest.skip("chapter 4 is not written yet")
    copy = tmp_path / "course"
    shutil.copytree(REPO / "course", copy, ignore=shutil.ignore_patterns("gradebook.db", "release"))
    done = _nbgrader_api(copy, monkeypatch).generate_assignment("04-training-loop")
    assert done["success"], done.get("error")
    theirs = load(copy / "release" / "04-training-loop" / "04-training-loop.ipynb")
    notebooks = tmp_path / "notebooks"
    release(Course(copy), notebooks)
    assert _cells(theirs) == _cells(load(notebooks / "04-training-loop.ipynb"))


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.slow
def test_released_notebooks_validate_in_jupyterlab(demo, tmp_path):
    """JupyterLab 4 with nbgrader's extensions: the Validate button's endpoint on our notebooks."""
    import urllib.parse
    import urllib.request

    _, notebooks, stub = demo
    (tmp_path / "stub.ipynb").write_text(json.dumps(stub))
    done = json.loads(json.dumps(stub))
    for index, code in (
        (3, "def add(a, b):\n    return a + b"),
        (6, "def mean(v):\n    return 1.0"),
    ):
        done["cells"][index]["source"] = code
    (tmp_path / "done.ipynb").write_text(json.dumps(done))
    port, token = _free_port(), "test-token"
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyter",
            "lab",
            "--no-browser",
            "--allow-root",
            f"--port={port}",
            f"--ServerApp.token={token}",
            f"--ServerApp.root_dir={tmp_path}",
            "--ServerApp.ip=127.0.0.1",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base, auth = f"http://127.0.0.1:{port}", {"Authorization": f"token {token}"}

    def call(path, data=None):
        body = urllib.parse.urlencode(data).encode() if data else None
        request = urllib.request.Request(base + path, data=body, headers=auth)
        return json.loads(urllib.request.urlopen(request, timeout=120).read())

    try:
        for _ in range(300):
            try:
                call("/api/status")
                break
            except OSError:
                assert server.poll() is None, "jupyter lab exited"
                time.sleep(0.2)
        extensions = [e for e in call("/lab/api/extensions") if "nbgrader" in e["name"]]
        assert extensions and all(e["enabled"] for e in extensions)
        assert call("/nbgrader_version?version=0.9.6") == {"success": True}
        failed = call("/assignments/validate", {"path": "stub.ipynb"})
        assert (
            failed["success"] and "NotImplementedError" in failed["value"]["failed"][0]["raw_error"]
        )
        assert call("/assignments/validate", {"path": "done.ipynb"}) == {
            "success": True,
            "value": {},
        }
    finally:
        server.terminate()
        server.wait(timeout=30)
