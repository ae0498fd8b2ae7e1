"""Shared test configuration: the `requires_cuda`, `requires_sandbox`, `requires_torchvision` and
`requires_browser` markers, headless plots."""

import os
import shutil
import time

import pytest
import torch

os.environ.setdefault("MPLBACKEND", "Agg")
# pytest runs two workers on two cores: one thread each avoids oversubscription, which makes
# tiny models 10-30 times slower.
torch.set_num_threads(1)


def _torchvision_problem() -> str | None:
    """Why torchvision cannot be used here (None when it can): absent, or built for another torch."""
    try:
        import torchvision  # noqa: F401
    except Exception as err:  # beside the torch 2.13 CPU wheel PyPI's torchvision fails to import
        return f"{type(err).__name__}: {err}"
    return None


def _browser_problem() -> str | None:
    """Why the browser tests cannot run here (None when they can)."""
    if not (shutil.which("chromium") or shutil.which("chromium-browser")):
        return (
            "Chromium is not installed; install it with: sudo apt-get install chromium "
            "fonts-liberation (Playwright drives this system browser: no `playwright install`)"
        )
    for module, extra in (("playwright", "dev"), ("jupyterlab", "course"), ("nbgrader", "course")):
        try:
            __import__(module)
        except ImportError:
            return f"the {module} package is missing; install it with: pip install -e '.[{extra}]'"
    return None


def pytest_configure(config):
    # CI sets it (.ci/run): there a browser test that cannot run is an error, not a skip.
    if os.environ.get("REQUIRE_BROWSER_TESTS") == "1":
        problem = _browser_problem()
        if problem:
            raise pytest.UsageError(
                f"REQUIRE_BROWSER_TESTS=1, but the browser tests cannot run: {problem}"
            )


def pytest_collection_modifyitems(config, items):
    from autograder.grader.sandbox import problem

    reason = problem()
    vision = (
        _torchvision_problem() if any("requires_torchvision" in i.keywords for i in items) else None
    )
    skip_vision = pytest.mark.skip(reason=f"needs torchvision ({vision})")
    skip_sandbox = pytest.mark.skip(reason=f"needs the grading sandbox: {reason}")
    skip_cuda = pytest.mark.skip(reason="needs a CUDA GPU; none is available here")
    browser = _browser_problem() if any("requires_browser" in i.keywords for i in items) else None
    skip_browser = pytest.mark.skip(reason=f"browser test: {browser}")
    for item in items:
        if "requires_cuda" in item.keywords and not torch.cuda.is_available():
            item.add_marker(skip_cuda)
        if "requires_sandbox" in item.keywords and reason is not None:
            item.add_marker(skip_sandbox)
        if "requires_torchvision" in item.keywords and vision is not None:
            item.add_marker(skip_vision)
        if "requires_browser" in item.keywords and browser is not None:
            item.add_marker(skip_browser)


# Where the suite's time goes: seconds per xdist worker and per test file (setup, call and
# teardown added up), printed at the end so that CI's log says which files to make cheaper and
# whether one worker idles while the other finishes. Not a budget: nothing asserts on it.
_SECONDS: dict[str, dict[str, float]] = {"worker": {}, "file": {}, "last": {}}
_START = time.monotonic()


def pytest_runtest_logreport(report):
    gateway = getattr(getattr(report, "node", None), "gateway", None)
    worker = gateway.id if gateway is not None else "main"
    path = report.nodeid.split("::", 1)[0]
    for key, name in (("worker", worker), ("file", path)):
        _SECONDS[key][name] = _SECONDS[key].get(name, 0.0) + report.duration
    _SECONDS["last"][worker] = time.monotonic() - _START


def pytest_terminal_summary(terminalreporter):
    if not _SECONDS["file"] or len(_SECONDS["file"]) < 5:
        return
    write = terminalreporter.write_line
    terminalreporter.section("time per worker and per file (setup + call + teardown)")
    for name, seconds in sorted(_SECONDS["worker"].items()):
        done = _SECONDS["last"][name] / 60
        write(f"  {name:<6} {seconds / 60:6.1f} min busy, its last test done at {done:.1f} min")
    for path, seconds in sorted(_SECONDS["file"].items(), key=lambda kv: -kv[1])[:15]:
        write(f"  {seconds / 60:6.1f} min  {path}")
