"""Check in the lab: under each exercise's tests, a Check button, a hint ladder and your progress.

An IPython extension that the learner's lab (``make lab``) loads into every kernel it starts
(``lab/learner/jupyter_server_config.py``, through :class:`autograder.lab.LearnerKernelSpecs`).
It changes nothing a cell computes. It remembers the code of each cell as it last ran, by the
cell's id; when a cell holding an exercise's tests has run, it shows three buttons under it:

- **Check** runs that exercise's hidden tests on the code you last ran, in another process
  (``python -m autograder check-server``, started at the first Check; after each check it starts
  a kernel for the chapter, so the next check waits only for the cells and the tests): the points
  grading would give and every failing check with its feedback, in seconds, without saving.
- **Hint** shows one more step for each failing check: the contract clause it breaks, then the
  section of the chapter that teaches it (a link). Each step is recorded.
- **Progress** shows every chapter's exercises: best points so far, checks and hints.

Outside the lab the same is a call: ``from autograder.inlab import check; check("evaluate")``.
Where the course's hidden tests are not on the machine (notebooks from nbgrader's exchange), Check
says so in one line and points to Validate, unless the kernel's environment names the class's
check service (``AUTOGRADER_CHECK_URL`` and ``AUTOGRADER_CHECK_TOKEN``: see
:mod:`autograder.grader.service`), which then answers instead. This module imports nothing that grades: the verdict
is reached in the checking process, never in the learner's kernel.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

from autograder.progress import (
    course_exercises,
    load,
    progress_file,
    record_check,
    record_hint,
    summary_html,
)
from autograder.verdict import CheckResult, words

__all__ = ["check", "load_ipython_extension", "progress"]

_lab: _Lab | None = None


def load_ipython_extension(ipython) -> None:
    """Called by IPython (``--ext autograder.inlab`` or ``%load_ext autograder.inlab``)."""
    global _lab
    if _lab is not None:
        return
    _lab = _Lab(ipython)
    ipython.events.register("pre_run_cell", _lab.pre_run_cell)
    ipython.events.register("post_run_cell", _lab.post_run_cell)


def unload_ipython_extension(ipython) -> None:
    """Called by ``%unload_ext autograder.inlab``: the buttons stop appearing."""
    global _lab
    if _lab is None:
        return
    ipython.events.unregister("pre_run_cell", _lab.pre_run_cell)
    ipython.events.unregister("post_run_cell", _lab.post_run_cell)
    _lab.close()
    _lab = None


def check(exercise: str, notebook: str | None = None) -> CheckResult:
    """Check one exercise of this notebook with its hidden tests, and show the verdict.

    Args:
        exercise: its name (``"evaluate"``), grade_id or what it defines (``"ResidualBlock"``).
        notebook: the notebook's path (default: the one this kernel runs, as the lab tells it).

    Returns:
        The :class:`autograder.verdict.CheckResult` (also displayed).
    """
    lab = _lab or _Lab(None)
    path = notebook or lab.notebook_path()
    if path is None:
        raise ValueError(
            "check() cannot tell which notebook this kernel runs: pass notebook='path.ipynb'"
        )
    result = lab.run_check(path, exercise)
    _display_html(result.html())
    return result


def progress(folder: str | None = None) -> None:
    """Show your progress over the whole course (the notebooks' folder by default)."""
    lab = _lab or _Lab(None)
    path = lab.notebook_path()
    where = Path(folder) if folder else (Path(path).parent if path else Path.cwd())
    language = lab.language(path) if path else "en"
    data = load(where / "progress.json")
    _display_html(summary_html(data, language, course_exercises(where)))


def _display_html(text: str) -> None:
    from IPython.display import HTML, display

    display(HTML(text))


class _Lab:
    """What the extension keeps: the code each cell last ran, the checking process, the panels."""

    def __init__(self, ipython) -> None:
        self.ipython = ipython
        self.sources: dict[str, str] = {}
        self.order: list[str] = []
        self._server: subprocess.Popen | None = None
        self._server_lock = threading.Lock()
        self._request_lock = threading.Lock()
        self._busy: set[str] = set()
        self._cache: tuple[str, float, dict] | None = None

    # -- what ran ------------------------------------------------------------------------------

    def pre_run_cell(self, info) -> None:
        cell_id = getattr(info, "cell_id", None)
        if cell_id and getattr(info, "raw_cell", None) is not None:
            self.sources[cell_id] = info.raw_cell
            if cell_id in self.order:
                self.order.remove(cell_id)
            self.order.append(cell_id)

    def post_run_cell(self, result) -> None:
        info = getattr(result, "info", None)
        cell_id = getattr(info, "cell_id", None)
        if not cell_id:
            return
        try:
            path = self.notebook_path()
            notebook = self.notebook(path) if path else None
        except (OSError, ValueError):
            return
        if notebook is None:
            return
        for cell in notebook.get("cells", []):
            if cell.get("id") != cell_id:
                continue
            meta = cell.get("metadata", {}).get("nbgrader", {})
            grade_id = meta.get("grade_id") or ""
            if meta.get("grade") and meta.get("locked") and grade_id.endswith("_tests"):
                self.show_panel(path, grade_id[: -len("_tests")])
            return

    # -- the notebook --------------------------------------------------------------------------

    def notebook_path(self) -> str | None:
        """The notebook this kernel runs (JupyterLab tells the kernel in JPY_SESSION_NAME)."""
        name = os.environ.get("JPY_SESSION_NAME")
        if name and name.endswith(".ipynb") and Path(name).is_file():
            return name
        return None

    def notebook(self, path: str) -> dict:
        mtime = os.stat(path).st_mtime
        if self._cache and self._cache[0] == path and self._cache[1] == mtime:
            return self._cache[2]
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        self._cache = (path, mtime, data)
        return data

    def language(self, path: str | None) -> str:
        try:
            meta = self.notebook(path).get("metadata", {}) if path else {}
        except (OSError, ValueError):
            return "en"
        return meta.get("autograder", {}).get("language") or "en"

    # -- checking ------------------------------------------------------------------------------

    def _ensure_server(self, path: str) -> subprocess.Popen:
        with self._server_lock:
            if self._server is None or self._server.poll() is not None:
                env = {k: v for k, v in os.environ.items() if k != "JPY_SESSION_NAME"}
                self._server = subprocess.Popen(
                    [sys.executable, "-m", "autograder", "check-server", "--notebook", path],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    text=True,
                    env=env,
                    cwd=str(_repository_root()),
                    start_new_session=True,
                )
            return self._server

    def run_check(self, path: str, exercise: str) -> CheckResult:
        """Ask the checking process (or the class's service) for a verdict on the code as it
        last ran; record it."""
        request = {
            "notebook": str(Path(path).resolve()),
            "exercise": exercise,
            "sources": dict(self.sources),
            "order": list(self.order),
        }
        url = os.environ.get("AUTOGRADER_CHECK_URL")
        if url:
            line = _ask_service(url, path, request)
        else:
            line = self._ask_local(path, request)
        return self._result(path, exercise, line)

    def _ask_local(self, path: str, request: dict) -> str:
        with self._request_lock:  # one request at a time on the pipe; the others wait their turn
            server = self._ensure_server(path)
            try:
                server.stdin.write(json.dumps(request) + "\n")
                server.stdin.flush()
                line = server.stdout.readline()
            except (OSError, ValueError) as exc:
                line = json.dumps({"error": f"the checking process stopped ({exc}): try again"})
        return line or json.dumps({"error": "the checking process stopped: try again"})

    def _result(self, path: str, exercise: str, line: str) -> CheckResult:
        data = json.loads(line)
        if data.get("no_hidden_tests"):  # said in the notebook's edition
            data = {"error": words(self.language(path))["no_hidden_tests"]}
        if "exercise" not in data:
            result = CheckResult(
                notebook=path,
                exercise=exercise,
                name=exercise.split("_", 1)[-1] if exercise.startswith("ch") else exercise,
                language=self.language(path),
                error=data.get("error", "no verdict"),
            )
        else:
            result = CheckResult.from_dict(data)
        if result.error is None:
            try:
                record_check(path, result)
            except OSError:
                pass  # the verdict stands; only the record is lost
        return result

    def close(self) -> None:
        server, self._server = self._server, None
        if server is not None and server.poll() is None:
            try:
                server.stdin.close()
                server.wait(timeout=5)
            except Exception:  # it ends with the kernel anyway
                server.kill()

    # -- the panel -----------------------------------------------------------------------------

    def show_panel(self, path: str, grade_id: str) -> None:
        language = self.language(path)
        w = words(language)
        short = grade_id.split("_", 1)[1] if grade_id.startswith("ch") else grade_id
        try:
            import ipywidgets as widgets
        except ImportError:
            _display_html(
                f"<p>{w['check']}: <code>from autograder.inlab import check; "
                f"check({short!r})</code></p>"
            )
            return
        state = {"result": None, "hints": 0}
        out = widgets.HTML(value="")
        buttons = {
            key: widgets.Button(description=w[key], tooltip=f"{w[key]}: {short}")
            for key in ("check", "hint", "progress")
        }
        buttons["check"].button_style = "primary"
        buttons["check"].add_class("autograder-check-button")
        buttons["hint"].add_class("autograder-hint-button")
        buttons["progress"].add_class("autograder-progress-button")
        buttons["hint"].disabled = True

        def render() -> None:
            result = state["result"]
            body = result.html(state["hints"]) if result is not None else ""
            chapter = (result.chapter if result is not None else None) or ""
            data = load(progress_file(path))
            exercises = course_exercises(Path(path).parent)
            if chapter and chapter in exercises:
                body += summary_html(data, language, exercises, chapters=[chapter])
            out.value = body

        def on_check(_button) -> None:
            if grade_id in self._busy:
                out.value = f"<p>{w['busy'].format(name=short)}</p>" + out.value
                return
            self._busy.add(grade_id)
            buttons["check"].disabled = True
            out.value = f"<p class='autograder-checking'>{w['checking'].format(name=short)}</p>"

            def work() -> None:
                try:
                    state["result"], state["hints"] = self.run_check(path, grade_id), 0
                    result = state["result"]
                    buttons["hint"].disabled = result.error is not None or not result.hint_steps
                    render()
                except Exception as exc:  # shown, never lost in a thread
                    out.value = f"<p>{w['could_not'].format(name=short, error=exc)}</p>"
                finally:
                    self._busy.discard(grade_id)
                    buttons["check"].disabled = False

            threading.Thread(target=work, daemon=True).start()

        def on_hint(_button) -> None:
            result = state["result"]
            if result is None or not result.hint_steps:
                return
            if state["hints"] < result.hint_steps:
                state["hints"] += 1
                try:
                    record_hint(path, result.chapter, result.name, state["hints"])
                except OSError:
                    pass
            buttons["hint"].disabled = state["hints"] >= result.hint_steps
            render()

        def on_progress(_button) -> None:
            data = load(progress_file(path))
            out.value = summary_html(data, language, course_exercises(Path(path).parent))

        buttons["check"].on_click(on_check)
        buttons["hint"].on_click(on_hint)
        buttons["progress"].on_click(on_progress)
        from IPython.display import display

        panel = widgets.VBox([widgets.HBox(list(buttons.values())), out])
        panel.add_class("autograder-panel")
        display(panel)


def _ask_service(url: str, path: str, request: dict) -> str:
    """POST the request, with the saved notebook itself, to the class's check service."""
    import urllib.error
    import urllib.request

    try:
        with open(path, encoding="utf-8") as handle:
            notebook = json.load(handle)
    except (OSError, ValueError) as exc:
        return json.dumps({"error": f"the notebook could not be read ({exc})"})
    body = json.dumps({**request, "notebook": notebook}).encode()
    headers = {"Content-Type": "application/json"}
    token = os.environ.get("AUTOGRADER_CHECK_TOKEN", "")
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        with urllib.request.urlopen(
            urllib.request.Request(url, data=body, headers=headers), timeout=600
        ) as reply:
            return reply.read().decode("utf-8")
    except urllib.error.HTTPError as exc:
        text = exc.read().decode("utf-8", "replace")
        try:
            return json.dumps({"error": json.loads(text)["error"]})
        except (ValueError, KeyError, TypeError):
            return json.dumps({"error": f"the class's check service answered {exc.code}"})
    except (OSError, ValueError) as exc:
        return json.dumps(
            {"error": f"the class's check service at {url} cannot be reached ({exc})"}
        )


def _repository_root() -> Path:
    """Where the checking process starts: the folder holding ``course/`` (for its default)."""
    return Path(__file__).resolve().parents[1]
