"""The kernel-side harness on its own: what it guards, and the data it hands back.

Each test runs a small script in a fresh Python process (the audit hook cannot be removed from
the process that installs it): the harness is installed as the grader installs it, then the
script tries one way of reaching the reference and prints what happened.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from autograder.transport import load

PRELUDE = """\
import json, os, sys, tempfile
from autograder.kernel import harness
payload = os.path.join(tempfile.mkdtemp(), "payload.json")
with open(payload, "w") as f:
    json.dump({"protect": ["builtins", "autograder.checks", "companion"],
               "references": ["companion"]}, f)
harness.install(payload)
import companion, companion.loop, companion.checkpoint

def attempt(label, action):
    try:
        action()
        print(label, "allowed")
    except Exception as exc:
        print(label, "refused", type(exc).__name__)
"""


def _run(script: str, tmp_path) -> dict[str, str]:
    done = subprocess.run(
        [sys.executable, "-c", PRELUDE + textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    lines = [line.split() for line in done.stdout.splitlines() if line.strip()]
    return {words[0]: " ".join(words[1:]) for words in lines}


def test_the_reference_stays_out_of_reach_after_install(tmp_path):
    seen = _run(
        """
        import importlib, importlib.util, marshal, types
        attempt("read_source", lambda: open(companion.loop.__file__).read())
        attempt("read_via_symlink", lambda: (os.symlink(companion.loop.__file__, "link.py"),
                                             open("link.py").read()))
        attempt("reload", lambda: importlib.reload(companion.loop))
        def from_file():
            spec = importlib.util.spec_from_file_location("copy", companion.checkpoint.__file__)
            spec.loader.exec_module(importlib.util.module_from_spec(spec))
        attempt("spec_from_file", from_file)
        attempt("function_copy", lambda: types.FunctionType(
            companion.loop.evaluate.__code__, vars(companion.loop)))
        attempt("renamed_code", lambda: companion.loop.evaluate.__code__.replace(
            co_filename="mine.py"))
        def transplant():
            def mine(*args, **kwargs):
                pass
            mine.__code__ = companion.loop.evaluate.__code__
        attempt("transplant", transplant)
        attempt("own_code", lambda: types.FunctionType((lambda: 1).__code__, {}))
        attempt("companion_works", lambda: companion.strip_prefixes({"module.w": 1}))
        attempt("other_files", lambda: open(json.__file__).read())
        import companion.data
        attempt("shipped_data", lambda: companion.data.digits())  # reads datasets/digits.npz
        fake = os.path.join(os.path.dirname(companion.__file__), "datasets", "loop.py")
        attempt("code_beside_the_data", lambda: open(fake).read())
        import subprocess
        attempt("subprocess_outside_probe", lambda: subprocess.run(["true"], check=True))
        """,
        tmp_path,
    )
    for label in (
        "read_source",
        "read_via_symlink",
        "reload",
        "spec_from_file",
        "function_copy",
        "renamed_code",
        "transplant",
    ):
        assert seen[label].startswith("refused"), (label, seen[label])
    assert seen["code_beside_the_data"] == "refused PermissionError"  # a .py file there is code
    for label in (
        "own_code",
        "companion_works",
        "other_files",
        "shipped_data",
        "subprocess_outside_probe",
    ):
        assert seen[label] == "allowed", (label, seen[label])
    assert seen["read_source"] == "refused PermissionError"
    assert seen["function_copy"] == "refused ReferenceCallError"


def test_a_traceback_through_the_companion_reads_no_source_and_raises_no_flag(tmp_path):
    # IPython's tracebacks count each frame's file lines with open(): a learner's error that
    # passes through companion code (yours_or_reference) must not look like reading the source.
    seen = _run(
        """
        import linecache
        from IPython.core import tbtools
        attempt("count_lines", lambda: tbtools.count_lines_in_py_file(companion.loop.__file__))
        attempt("linecache", lambda: linecache.updatecache(companion.loop.__file__))
        print("flags", len(harness._state["violations"]))
        attempt("read_source", lambda: open(companion.loop.__file__).read())
        print("flags_after_reading", len(harness._state["violations"]))
        """,
        tmp_path,
    )
    assert seen["count_lines"] == "refused PermissionError"
    assert seen["linecache"] == "allowed"  # linecache swallows the error: no source lines
    assert seen["flags"] == "0" and seen["flags_after_reading"] == "1"


def test_run_test_hands_back_data_with_the_companion_blocked(tmp_path):
    base = tmp_path / "results"
    hidden = textwrap.dedent(
        """
        import subprocess
        from autograder.checks import hidden_test

        def _run(seed):
            found = {"mine": double(seed)}
            for name, call in [("public", lambda: companion.strip_prefixes({})),
                               ("private", lambda: companion.loop._Tally()),
                               ("spawn", lambda: subprocess.run(["true"]))]:
                try:
                    call()
                    found[name] = "allowed"
                except Exception as exc:
                    found[name] = type(exc).__name__
            return found

        hidden_test(_run, lambda got, seed: None, seeds=(2, 5))
        """
    )
    seen = _run(
        f"""
        import __main__
        __main__.double = lambda x: 2 * x
        harness._state["user_ns"] = vars(__main__)
        harness.run_test("ch09_double_tests", "assert double(1) == 2", {hidden!r}, {str(base)!r})
        attempt("after_probe", lambda: companion.strip_prefixes({{}}))
        """,
        tmp_path,
    )
    assert seen["after_probe"] == "allowed"
    data = load(base)
    assert data["visible"] is None and data["hidden_error"] is None
    assert [entry["seed"] for entry in data["probe"]] == [2, 5]
    first = data["probe"][0]["data"]
    assert first == {
        "mine": 4,
        "public": "ReferenceCallError",
        "private": "ReferenceCallError",
        "spawn": "ReferenceCallError",
    }
    assert any("companion.checkpoint.strip_prefixes" in flag for flag in data["flags"])
    assert any("starting another program" in flag for flag in data["flags"])


@pytest.mark.parametrize(
    ("visible", "expected"),
    [("assert double(1) == 3, 'double is off'", ["AssertionError", "double is off"])],
)
def test_a_failing_visible_test_is_reported_and_the_hidden_half_skipped(
    tmp_path, visible, expected
):
    base = tmp_path / "results"
    _run(
        f"""
        import __main__
        __main__.double = lambda x: 2 * x
        harness._state["user_ns"] = vars(__main__)
        harness.run_test("ch09_double_tests", {visible!r}, "raise SystemExit", {str(base)!r})
        """,
        tmp_path,
    )
    data = load(base)
    assert data["visible"] == expected and data["probe"] is None
    assert json.dumps(data["flags"]) == "[]"
