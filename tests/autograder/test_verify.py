"""autograder.verify: the whole check on the fixture course, and each way it can fail."""

from __future__ import annotations

import json

import nbformat

from autograder.__main__ import main
from autograder.course import Course
from autograder.release import release
from autograder.verify import leak_scan, verify

from .fixture_course import build_course, load


def test_verify_passes_on_a_good_course(tmp_path, capsys):
    course_dir, notebooks = build_course(tmp_path)
    release(Course(course_dir), notebooks)
    code = main(["verify", "--course", str(course_dir), "--notebooks", str(notebooks)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "ok   01-demo: source runs cleanly and scores full marks (6 / 6)" in out
    assert "ok   01-demo: released stub scores zero (0 / 6)" in out
    assert "ok   leak scan: 2 notebooks" in out and "verify passed" in out


def test_leak_scan_catches_a_canary_and_a_solution_line(demo, tmp_path):
    course, notebooks, stub = demo
    assert leak_scan(course, notebooks).ok
    leaked = json.loads(json.dumps(stub))
    leaked["cells"].append(nbformat.v4.new_markdown_cell("note to self: # CANARY ch01_add"))
    leaked["cells"].append(nbformat.v4.new_code_cell("        running_total += value"))
    folder = tmp_path / "notebooks"
    folder.mkdir()
    (folder / "01-demo.ipynb").write_text(json.dumps(leaked))
    check = leak_scan(course, folder)
    assert not check.ok
    assert any("contains a CANARY line" in d for d in check.details)
    assert any("cell 15" in d and "running_total += value" in d for d in check.details)


def test_leak_scan_catches_hidden_test_lines_in_outputs(demo, tmp_path):
    course, _, stub = demo
    leaked = json.loads(json.dumps(stub))
    cell = leaked["cells"][4]
    cell["outputs"] = [
        {
            "output_type": "stream",
            "name": "stdout",
            "text": ["_MEAN_SAMPLES = {0: [1.0, 2.0, 4.5], 1: [3.0, -1.0, 0.5, 8.0]}\n"],
        }
    ]
    (tmp_path / "01-demo.ipynb").write_text(json.dumps(leaked))
    check = leak_scan(course, tmp_path)
    assert not check.ok and "_MEAN_SAMPLES" in check.details[0]


def test_verify_reports_broken_chapters(tmp_path, capsys):
    course_dir, notebooks = build_course(tmp_path)
    source = course_dir / "source" / "01-demo" / "01-demo.ipynb"
    nb = load(source)
    add, add_tests = nb["cells"][3], nb["cells"][4]
    add["source"] = "".join(add["source"]).replace("# CANARY ch01_add\n", "")
    add["source"] = add["source"].replace("return a + b", "return a * b")  # a wrong reference
    add_tests["source"] = "# Checks nothing.\n### BEGIN HIDDEN TESTS\n# CANARY ch01_add_hidden\n"
    add_tests["source"] += "from autograder.checks import hidden_test\n"
    add_tests["source"] += "hidden_test(lambda seed: None, lambda got, seed: None)\n"
    add_tests["source"] += "### END HIDDEN TESTS\n"
    nb["cells"][5]["source"] = "### Exercise 2 — mean (4 points)"
    source.write_text(json.dumps(nb, indent=1))
    code = main(["verify", "--course", str(course_dir), "--notebooks", str(notebooks)])
    out = capsys.readouterr().out
    assert code == 1
    assert "FAIL 01-demo: structure" in out
    assert "the solution region lacks its line '# CANARY ch01_add'" in out
    assert "the exercise heading should show '(3 points)', it shows (4 points)" in out
    assert "FAIL 01-demo: released stub scores zero (2 / 6)" in out
    assert "add earns 2 points on the stub" in out
    assert "missing: " in out and "verify FAILED" in out
    assert "ok   02-extra: source runs cleanly and scores full marks" in out


def test_verify_catches_a_wrong_reference_solution(tmp_path):
    course_dir, notebooks = build_course(tmp_path)
    source = course_dir / "source" / "02-extra" / "02-extra.ipynb"
    nb = load(source)
    nb["cells"][3]["source"] = "".join(nb["cells"][3]["source"]).replace("x * 2", "x * 3")
    source.write_text(json.dumps(nb, indent=1))
    course = Course(course_dir)
    release(course, notebooks)
    report = verify(course, notebooks)
    failed = [c for c in report.checks if not c.ok]
    assert [c.label for c in failed] == [
        "02-extra: source runs cleanly and scores full marks (0 / 1)"
    ]
    assert "double() is wrong (got 63, expected 42)" in failed[0].details[0]


def test_verify_requires_hidden_tests_declared_with_hidden_test(tmp_path, capsys):
    course_dir, notebooks = build_course(tmp_path)
    source = course_dir / "source" / "02-extra" / "02-extra.ipynb"
    nb = load(source)
    nb["cells"][4]["source"] = (
        "# Checks double in the old style.\n### BEGIN HIDDEN TESTS\n# CANARY ch02_double_hidden\n"
        "assert double(21) == 42\n### END HIDDEN TESTS\n"
    )
    source.write_text(json.dumps(nb, indent=1))
    release(Course(course_dir), notebooks)
    code = main(["verify", "--course", str(course_dir), "--notebooks", str(notebooks)])
    out = capsys.readouterr().out
    assert code == 1
    assert "FAIL 02-extra: structure" in out
    assert "ch02_double_tests: the hidden tests must call autograder.checks.hidden_test" in out
    assert "FAIL 02-extra: source runs cleanly and scores full marks" in out


def test_verify_chapter_grades_only_that_chapter(tmp_path, capsys):
    course_dir, notebooks = build_course(tmp_path)
    release(Course(course_dir), notebooks)
    args = ["verify", "--course", str(course_dir), "--notebooks", str(notebooks)]
    code = main([*args, "--chapter", "2"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "02-extra: source runs cleanly and scores full marks" in out
    assert "01-demo" not in out
    assert main([*args, "--chapter", "07"]) == 1
    assert "--chapter 07: no such chapter in the course" in capsys.readouterr().out


def test_verify_catches_an_error_and_deprecation_warnings_outside_the_tests(tmp_path):
    course_dir, notebooks = build_course(tmp_path)
    source = course_dir / "source" / "02-extra" / "02-extra.ipynb"
    nb = load(source)
    cells = [
        "import warnings\n"
        "warnings.warn('old_api() is deprecated', DeprecationWarning)\n"
        "warnings.warn('the default will change', FutureWarning)\n",
        "print({}['missing'])\n",  # a demonstration that raises
    ]
    nb["cells"][2:2] = [nbformat.v4.new_code_cell(code) for code in cells]
    source.write_text(json.dumps(nb, indent=1))
    course = Course(course_dir)
    release(course, notebooks)
    report = verify(course, notebooks, only=["02"])
    failed = [c for c in report.checks if not c.ok]
    assert [c.label for c in failed] == [
        "02-extra: source runs cleanly and scores full marks (1 / 1)"
    ]
    details = "\n".join(failed[0].details)
    assert "DeprecationWarning: old_api() is deprecated" in details, details
    assert "FutureWarning: the default will change" in details, details
    assert "stopped (error): KeyError: 'missing'" in details, details


def test_verify_scans_a_built_book_next_to_the_course(tmp_path, capsys):
    """`make book` writes build/book/html beside course/: verify's leak scan covers its pages."""
    course_dir, notebooks = build_course(tmp_path)
    release(Course(course_dir), notebooks)
    site = course_dir.parent / "build" / "book" / "html" / "chapters"
    site.mkdir(parents=True)
    page = site / "01-demo.html"
    page.write_text("<pre><span>print</span>(<span>1</span>)</pre>")
    args = ["verify", "--course", str(course_dir), "--notebooks", str(notebooks)]
    assert main(args) == 0
    assert "ok   leak scan: the book, 1 pages" in capsys.readouterr().out
    # a solution line, split into highlighted tokens and escaped as Pygments writes it
    page.write_text("<pre>        <span>running_total</span> <span>+=</span> value\n</pre>")
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "FAIL leak scan: the book" in out and "running_total += value" in out
