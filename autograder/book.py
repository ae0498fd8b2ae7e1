"""The course as a static HTML book: the learner notebooks executed, and companion's API reference.

``python -m autograder book`` (``make book``) builds, offline, a Sphinx site with MyST-NB and the
Book theme:

1. every released notebook (``notebooks/``, what a learner gets: stubs, no solutions) is run top
   to bottom in a fresh kernel, so each chapter page shows its figures, tables and measured
   numbers. Where an exercise is still a stub, the chapter's later cells use the companion in its
   place (as they do for a learner); the stub's own test cell fails with NotImplementedError, and
   that error output is left out of the page. Any other error stops the build.
2. a page per chapter (with a link to download its notebook and to the API pages of the companion
   functions it calls), a home page (from the README: what the course is, the two commands, the
   chapter table) and the API reference, one page per group of :data:`API_GROUPS`.
3. Sphinx builds the HTML; any Sphinx warning fails the build.
4. the built site is checked: every internal link and anchor resolves, and the leak scan of
   ``autograder verify`` runs over every HTML page (no solution line, hidden test or canary).

Nothing is downloaded and no page loads anything from the network.
"""

from __future__ import annotations

import html as html_lib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from autograder.course import Course, CourseError, cell_source, is_test_cell

# What each public name of companion is for: one API page per group, in this order. A test keeps
# it complete (every name of ``companion.__all__`` in exactly one group).
# fmt: off
API_GROUPS: dict[str, tuple[str, list[str]]] = {
    "training": (
        "Training loop",
        ["fit", "train_one_epoch", "evaluate", "History", "NonFiniteLossError", "predict",
         "pick_device", "steps_per_epoch"],
    ),
    "precision": (
        "Mixed precision and update rules",
        ["autocast", "make_scaler", "amp_step", "clip_and_step", "accumulation_step",
         "ema_update"],
    ),
    "checkpoints": (
        "Checkpoints and resume",
        ["save_checkpoint", "load_checkpoint", "latest_checkpoint", "CheckpointError",
         "load_unwrapped", "unwrap_model", "strip_prefixes", "seed_everything", "get_rng_state",
         "set_rng_state", "ReplayWarning"],
    ),
    "callbacks": (
        "Callbacks and metrics",
        ["EarlyStopping", "BestCheckpoint", "FitState", "F1Score"],
    ),
    "data": (
        "Data",
        ["digits", "shapes", "sequences", "SHAPES_CLASSES", "SequenceDataset", "Splits",
         "fashion_mnist", "cifar10", "image_tensors", "as_float32", "pad_collate",
         "InMemoryLoader", "MemmapDataset", "write_memmap_dataset", "loader_throughput",
         "ThroughputTable", "choose_num_workers", "plan_num_workers"],
    ),
    "models": (
        "Building blocks and fine-tuning",
        ["ResidualBlock", "WithFeatures", "Standardize", "freeze_for_finetuning"],
    ),
    "debugging": (
        "Debugging",
        ["smoke_test", "SmokeTestError", "trace_shapes", "output_shape", "find_device_mismatches",
         "diagnose_profile", "detect_leaks", "LeakDetector", "graph_ops", "draw_graph"],
    ),
    "deployment": (
        "Export and serving",
        ["export_onnx", "verify_onnx", "ExportError", "VerificationError", "VerificationReport",
         "quantize_onnx", "QuantizationReport", "benchmark_inference", "InferenceBenchmark"],
    ),
    "environment": (
        "Environment and notebooks",
        ["doctor", "diagnose", "cuda_compatible", "choose_wheel", "usable_cores", "setup_notebook",
         "NotebookSetup", "yours_or_reference", "cjk_font_fallback"],
    ),
}
# fmt: on

_CONF = Path(__file__).resolve().parents[1] / "book" / "conf.py"
_WIDGET = "application/vnd.jupyter.widget-view+json"
_COMPANION_NAME = re.compile(r"\bcompanion\.([A-Za-z_]\w*)")


class BookError(CourseError):
    """The book cannot be built: a chapter failed, Sphinx warned, a link or a leak was found."""


@dataclass
class BookResult:
    """What a build made and how long each part took."""

    html: Path
    pages: int = 0
    chapters: list[tuple[str, float]] = field(default_factory=list)  # (name, seconds to run)
    execute_s: float = 0.0
    sphinx_s: float = 0.0
    check_s: float = 0.0
    total_s: float = 0.0

    def summary(self) -> str:
        slowest = ", ".join(f"{name[:2]} {s:.0f} s" for name, s in self.chapters)
        return (
            f"book: {self.pages} pages in {self.html} ({self.total_s:.0f} s: chapters run "
            f"{self.execute_s:.0f} s [{slowest}], Sphinx {self.sphinx_s:.0f} s, links and leak "
            f"scan {self.check_s:.1f} s); open {self.html / 'index.html'}"
        )


# ---------------------------------------------------------------------------------------------
# 1. the chapters, executed


def _run_notebook(path: str, fast: bool, timeout: int) -> tuple[dict, float]:
    """Execute one notebook in a fresh kernel in an empty folder; returns (notebook, seconds)."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    if fast:
        os.environ["COURSE_FAST"] = "1"
    else:
        os.environ.pop("COURSE_FAST", None)
    os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    with tempfile.TemporaryDirectory(prefix="book-") as cwd:
        client = NotebookClient(
            nb,
            kernel_name="python3",
            timeout=timeout,
            allow_errors=True,  # a stub's test cell fails; anything else is checked after
            store_widget_state=False,  # widget state would make pages load its JavaScript
            shutdown_kernel="immediate",
            resources={"metadata": {"path": cwd}},
        )
        start = time.perf_counter()
        client.execute(stderr=subprocess.DEVNULL)  # the kernel's start-up chatter
        seconds = time.perf_counter() - start
    return json.loads(nbformat.writes(nb)), seconds


def _clean(nb: dict, name: str) -> None:
    """Drop what a page should not show; raise on an error a learner would not see.

    A stub's test cell (an nbgrader test cell) fails with NotImplementedError: its error output
    goes. Widget views (progress bars) keep their plain-text form, so no page needs the widget
    JavaScript. Any other error output is a broken chapter.
    """
    problems = []
    for index, cell in enumerate(nb["cells"], start=1):
        if cell["cell_type"] != "code":
            continue
        kept = []
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                if is_test_cell(cell) and output.get("ename") == "NotImplementedError":
                    continue
                problems.append(
                    f"{name} cell {index}: {output.get('ename')}: {output.get('evalue')}"
                )
                continue
            data = output.get("data")
            if data and _WIDGET in data:
                data.pop(_WIDGET)
                if not data:
                    continue
            kept.append(output)
        cell["outputs"] = kept
    nb.get("metadata", {}).pop("widgets", None)
    if problems:
        raise BookError("a chapter failed while the book ran it: " + "; ".join(problems))


def _api_names() -> dict[str, str]:
    """Every public companion name -> the group page that documents it."""
    return {name: group for group, (_, names) in API_GROUPS.items() for name in names}


def _annotate(nb: dict, stem: str, api: dict[str, str]) -> list[str]:
    """Add the download link under the title and the API links at the end; returns names used."""
    used: list[str] = []
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            for found in _COMPANION_NAME.findall(cell_source(cell)):
                if found in api and found not in used:
                    used.append(found)
    link = (
        f"*This page is the learner notebook, run top to bottom on a CPU: exercises not yet "
        f"written use the companion in their place.* Download it and run it yourself: "
        f"{{download}}`{stem}.ipynb <notebooks/{stem}.ipynb>` (or `make lab`)."
    )
    title_at = next((i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "markdown"), None)
    nb["cells"].insert(
        0 if title_at is None else title_at + 1, _markdown(link, "book-notebook-link")
    )
    if used:
        lines = ["## Companion functions in this chapter", ""]
        lines += [f"- {{py:obj}}`companion.{n}` ({API_GROUPS[api[n]][0]})" for n in used]
        nb["cells"].append(_markdown("\n".join(lines), "book-companion-links"))
    return used


def _markdown(text: str, cell_id: str) -> dict:
    return {"cell_type": "markdown", "id": cell_id, "metadata": {}, "source": text}


# ---------------------------------------------------------------------------------------------
# 2. the home page and the API reference


def _readme_parts(readme: Path) -> tuple[str, dict[str, str]]:
    """The README's opening paragraph and its chapter table (chapter number -> what you learn)."""
    text = readme.read_text(encoding="utf-8")
    body = text.split("\n## ", 1)[0].split("\n", 1)[1].strip().split("\n\n", 1)[0]
    rows = {}
    for line in text.splitlines():
        match = re.match(r"^\|\s*(\d+)\s*—[^|]*\|(.*)\|\s*$", line)
        if match:
            rows[match.group(1)] = match.group(2).strip()
    return body, rows


def _home(readme: Path, chapters: list[tuple[str, str]]) -> str:
    intro, rows = _readme_parts(readme)
    lines = [
        "# PyTorch in Practice",
        "",
        intro,
        "",
        "This site is the course as a learner gets it, every chapter run on a CPU, and the",
        "reference of `companion`, the library the course builds.",
        "",
        "## Two commands",
        "",
        "```bash",
        "make lab    # set everything up and open the course in JupyterLab",
        "make test   # set everything up and run the whole test suite",
        "```",
        "",
        "Both need only Python 3.10+ and `make`; nothing needs the network after installation.",
        "",
        "## The chapters",
        "",
        "| chapter | what you will be able to do |",
        "| --- | --- |",
    ]
    for stem, title in chapters:
        number = str(int(stem[:2]))
        lines.append(f"| [{title}](chapters/{stem}.ipynb) | {rows.get(number, '')} |")
    lines += [
        "",
        "## The companion library",
        "",
        "[The API reference](api/index.md) documents every public name of `companion`, grouped",
        "by what it is for.",
        "",
        "```{toctree}",
        ":hidden:",
        ":caption: Chapters",
        "",
        *[f"chapters/{stem}" for stem, _ in chapters],
        "```",
        "",
        "```{toctree}",
        ":hidden:",
        ":caption: companion",
        "",
        "api/index",
        "```",
        "",
    ]
    return "\n".join(lines)


# Pages that open with a module's docstring: what no single name's docstring holds.
API_INTROS = {"callbacks": "companion.callbacks"}  # the callback protocol fit follows


def _api_pages(folder: Path) -> None:
    import inspect

    import companion

    folder.mkdir(parents=True, exist_ok=True)
    index = [
        "# companion API reference",
        "",
        "Every public name of `companion` (all importable as `companion.NAME`), grouped by what",
        "it is for. The examples in the docstrings run as written (the test suite doctests",
        "them).",
        "",
        "```{toctree}",
        ":maxdepth: 1",
        "",
        *API_GROUPS,
        "```",
        "",
    ]
    for group, (title, names) in API_GROUPS.items():
        index.append(f"- [{title}]({group}.md): " + ", ".join(f"`{n}`" for n in names))
        page = [f"# {title}", "", "```{eval-rst}", ".. currentmodule:: companion", ""]
        if group in API_INTROS:  # a module whose docstring the page needs (a protocol)
            page += [f".. automodule:: {API_INTROS[group]}", "   :no-members:", "",
                     ".. currentmodule:: companion", ""]  # fmt: skip
        for name in names:
            obj = getattr(companion, name)
            if inspect.isclass(obj):
                directive = "autoexception" if issubclass(obj, BaseException) else "autoclass"
            elif callable(obj):
                directive = "autofunction"
            else:
                directive = "autodata"
            page += [f".. {directive}:: {name}", ""]
        page += ["```", ""]
        (folder / f"{group}.md").write_text("\n".join(page), encoding="utf-8")
    (folder / "index.md").write_text("\n".join(index), encoding="utf-8")


# ---------------------------------------------------------------------------------------------
# 4. checks of the built site


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for key, value in attrs:
            if key == "id" and value:
                self.ids.add(value)
            elif key in ("href", "src") and value:
                self.links.append(value)


def check_links(site: Path) -> list[str]:
    """Every internal link and anchor of the built site that does not resolve."""
    pages: dict[Path, _Links] = {}
    for page in sorted(site.rglob("*.html")):
        if "_static" in page.relative_to(site).parts:
            continue  # the theme's template fragments, copied as they are: not pages
        parser = _Links()
        parser.feed(page.read_text(encoding="utf-8", errors="replace"))
        pages[page.resolve()] = parser
    broken = []
    for page, parser in pages.items():
        for link in parser.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith(("mailto:", "javascript:", "data:")):
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            rel = page.relative_to(site.resolve())
            if not target.exists():
                broken.append(f"{rel}: {link} (no such file)")
            elif parts.fragment and target in pages and parts.fragment not in pages[target].ids:
                broken.append(f"{rel}: {link} (no such anchor)")
    return broken


class _Text(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.chunks: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self._skip += 1

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self._skip:
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.chunks.append(data)


def page_text(path: Path) -> str:
    """A page's visible text (markup and scripts removed, entities decoded)."""
    parser = _Text()
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    return html_lib.unescape("".join(parser.chunks))


# ---------------------------------------------------------------------------------------------
# the build


def build_book(
    course: Course,
    notebooks: Path,
    out: Path,
    *,
    fast: bool = False,
    jobs: int = 2,
    timeout: int = 600,
    log=print,
) -> BookResult:
    """Build the book into ``out/html`` from the released ``notebooks``; see the module docstring.

    Args:
        course: the course (its source notebooks hold the secrets the leak scan looks for).
        notebooks: the released learner notebooks (``autograder release`` writes them).
        out: the build folder; ``out/src`` (generated pages) and ``out/html`` are replaced.
        fast: run the chapters in fast mode (``COURSE_FAST=1``: shorter demonstrations).
        jobs: chapters run side by side (each uses one CPU thread).
        timeout: seconds one cell may take.
        log: where progress lines go.

    Raises:
        BookError: a chapter failed, Sphinx warned, a link is broken or a secret leaked.
    """
    from autograder.verify import leak_scan_site

    if not isinstance(jobs, int) or jobs < 1:
        raise BookError(f"jobs must be a positive int, got {jobs!r}")
    started = time.perf_counter()
    chapters = [chapter for chapter in course.chapters()]
    released = [Path(notebooks) / f"{chapter.name}.ipynb" for chapter in chapters]
    missing = [str(p) for p in released if not p.exists()]
    if missing:
        raise BookError(
            f"no released notebook {', '.join(missing)}: run `python -m autograder release` "
            "(or `make book`, which does) first"
        )
    out = Path(out)
    src, site = out / "src", out / "html"
    for folder in (src, site):
        shutil.rmtree(folder, ignore_errors=True)
    (src / "chapters" / "notebooks").mkdir(parents=True)
    shutil.copy(_CONF, src / "conf.py")
    shutil.copytree(_CONF.parent / "_static", src / "_static")

    result = BookResult(html=site)
    mode = "fast mode" if fast else "as a learner runs them"
    log(f"book: running {len(released)} chapters ({mode}, {jobs} side by side)")
    begin = time.perf_counter()
    api = _api_names()
    titles = []
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(_run_notebook, str(p), fast, timeout) for p in released]
        for path, future in zip(released, futures):
            nb, seconds = future.result()
            stem = path.stem
            _clean(nb, stem)
            _annotate(nb, stem, api)
            (src / "chapters" / f"{stem}.ipynb").write_text(json.dumps(nb), encoding="utf-8")
            shutil.copy(path, src / "chapters" / "notebooks" / path.name)
            title = next(
                (
                    cell_source(c).split("\n", 1)[0].lstrip("# ").strip()
                    for c in nb["cells"]
                    if c["cell_type"] == "markdown"
                ),
                stem,
            )
            titles.append((stem, title))
            result.chapters.append((stem, seconds))
            log(f"book: {stem} ran in {seconds:.1f} s")
    result.execute_s = time.perf_counter() - begin

    readme = course.root.parent / "README.md"
    (src / "index.md").write_text(_home(readme, titles), encoding="utf-8")
    _api_pages(src / "api")

    begin = time.perf_counter()
    log("book: Sphinx is writing the HTML")
    warnings = out / "sphinx-warnings.txt"
    command = [
        sys.executable,
        "-m",
        "sphinx",
        "-b",
        "html",
        "-q",
        "--keep-going",
        "-w",
        str(warnings),
        str(src),
        str(site),
    ]
    run = subprocess.run(command, capture_output=True, text=True)
    result.sphinx_s = time.perf_counter() - begin
    told = warnings.read_text(encoding="utf-8").strip() if warnings.exists() else ""
    if run.returncode != 0 or told:
        detail = told or run.stderr.strip() or run.stdout.strip()
        raise BookError(f"Sphinx could not build the book cleanly:\n{detail[-4000:]}")

    begin = time.perf_counter()
    broken = check_links(site)
    if broken:
        raise BookError(f"{len(broken)} broken internal links: " + "; ".join(broken[:20]))
    scan = leak_scan_site(course, site)
    if not scan.ok:
        raise BookError(
            "the book shows what learners must not see: " + "; ".join(scan.details[:20])
        )
    result.check_s = time.perf_counter() - begin
    result.pages = len(list(site.rglob("*.html")))
    result.total_s = time.perf_counter() - started
    return result
