"""Generate the learner notebooks in ``notebooks/`` from ``course/source/`` with nbgrader.

Another edition (``Course(root, language="zh")``) is released the same way from the English
source and its catalogs (:mod:`autograder.i18n`), into its own folder (``notebooks-zh/``); its
notebooks record ``metadata.autograder.language``, which tells the grader the edition.

The notebook passes through nbgrader's own preprocessors, in the order ``nbgrader
generate_assignment`` uses (lock cells, clear solutions, clear outputs, checksums, clear hidden
tests, clear the mark scheme), configured by ``course/nbgrader_config.py``, so both workflows give
the same cells, then :class:`autograder.lab.LabReady` (Run All goes past failing tests; the notebook
opens unmodified in JupyterLab). We add ``metadata.autograder``: the chapter, a stamp of what the
file was made from, and a hash of the file itself, which tells an untouched release from a
learner's edits. Nothing depends on the time or on random ids, so releasing twice changes nothing.

One field depends on the machine: ``language_info.version``, the Python version of the kernel, which
JupyterLab compares with its kernel's. Release writes the running Python's (under ``make lab``, the
learner's), refreshes it in untouched notebooks, and ``--check`` ignores it.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from autograder.course import Chapter, Course, CourseError
from autograder.lab import current_python

__all__ = ["ReleaseReport", "release", "released_notebook", "trust_untouched"]

# Bump when the release recipe changes: it invalidates the stamp of every released notebook.
RELEASE_FORMAT = 2
_BACKUP_DIR = "backup"


@dataclass
class ReleaseReport:
    """What ``release`` did (or, with ``check=True``, would do).

    Attributes:
        written: notebooks (re)generated. up_to_date: already current.
        stale: out of date (check mode) or kept because they hold a learner's edits.
        missing: not there yet (check mode). extra: notebooks with no chapter behind them.
        removed: stale generated extras deleted. backups: learner copies saved before --force.
        messages: one line per notable event, for the CLI.
    """

    written: list[Path] = field(default_factory=list)
    up_to_date: list[Path] = field(default_factory=list)
    stale: list[Path] = field(default_factory=list)
    missing: list[Path] = field(default_factory=list)
    extra: list[Path] = field(default_factory=list)
    removed: list[Path] = field(default_factory=list)
    backups: list[Path] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)

    @property
    def in_sync(self) -> bool:
        """True when nothing is stale, missing or extra."""
        return not (self.stale or self.missing or self.extra)

    def to_dict(self) -> dict:
        """Plain data: lists of path strings, plus ``in_sync``."""
        keys = ("written", "up_to_date", "stale", "missing", "extra", "removed", "backups")
        data = {key: [str(p) for p in getattr(self, key)] for key in keys}
        return {**data, "in_sync": self.in_sync, "messages": list(self.messages)}

    def __str__(self) -> str:
        return "\n".join(self.messages) or "notebooks/ is up to date"


def release(
    course: Course,
    notebooks: Path,
    *,
    check: bool = False,
    force: bool = False,
) -> ReleaseReport:
    """Regenerate ``notebooks/`` from the course's source notebooks.

    A released notebook that a learner has changed (saved from JupyterLab) is never overwritten
    silently. While its chapter's source is unchanged it is simply current; once the source
    changes it is kept and reported as stale. ``force`` replaces it anyway, after copying it to
    ``notebooks/backup/``. Unchanged notebooks are recognised from their stamp without loading
    nbgrader, so a release with nothing to do takes a fraction of a second.

    Args:
        course: the course whose ``source/`` is released.
        notebooks: the learners' folder (``notebooks/``).
        check: only compare; write nothing. The report's ``in_sync`` says whether ``notebooks/``
            matches the source exactly.
        force: replace notebooks that hold a learner's edits, even when their source did not
            change (after backing them up): a way to start a chapter afresh.

    Returns:
        A :class:`ReleaseReport`.

    Raises:
        CourseError: if the course layout or a source notebook is broken.

    Example:
        >>> report = release(Course(Path("course")), Path("notebooks"), check=True)  # doctest: +SKIP
        >>> report.in_sync  # doctest: +SKIP
        True
    """
    notebooks = Path(notebooks)
    report = ReleaseReport()
    chapters = course.chapters()
    config_bytes = course.config_file.read_bytes() if course.config_file.is_file() else b""
    expected = {chapter.released_name for chapter in chapters}
    local_python = current_python()
    for chapter in chapters:
        target = notebooks / chapter.released_name
        stamp = _stamp(chapter, config_bytes)
        on_disk = _read_json(target)
        if not (check or force) and on_disk is not None and _stamp_of(on_disk) == stamp:
            # Released from this very source: untouched, or holding the learner's work on it.
            # An untouched one is rewritten only for another Python (see the module docstring).
            if _python_of(on_disk) == local_python or not _is_pristine(on_disk):
                report.up_to_date.append(target)
                continue
        python = (_python_of(on_disk) if check and on_disk else None) or local_python
        try:
            text = released_notebook(course, chapter, stamp=stamp, python_version=python)
        except CourseError as exc:
            if chapter.language == "en":
                raise
            # An edition whose catalog is incomplete or stale: the other chapters still go out.
            (report.stale if on_disk is not None else report.missing).append(target)
            report.messages.append(f"not released: {target}: {str(exc).splitlines()[0]}")
            continue
        if on_disk is not None and target.read_text(encoding="utf-8") == text:
            report.up_to_date.append(target)
            continue
        if check:
            (report.stale if on_disk is not None else report.missing).append(target)
            what = "out of date" if on_disk is not None else "missing"
            report.messages.append(f"{what}: {target} (run: python -m autograder release)")
            continue
        if on_disk is not None and not _is_pristine(on_disk):
            if not force:
                report.stale.append(target)
                report.messages.append(
                    f"kept {target}: it has changes saved from JupyterLab (your work), so the new "
                    f"release of {chapter.name} was not written; rename your copy, or run "
                    "`python -m autograder release --force` to replace it (a backup is kept)"
                )
                continue
            backup = _backup(target, notebooks)
            report.backups.append(backup)
            report.messages.append(f"saved your copy of {target} as {backup}")
        notebooks.mkdir(parents=True, exist_ok=True)
        _write_atomic(target, text)
        report.written.append(target)
        report.messages.append(f"wrote {target}")
    _handle_extras(notebooks, expected, check=check, report=report)
    return report


def released_notebook(
    course: Course,
    chapter: Chapter,
    *,
    stamp: str | None = None,
    python_version: str | None = None,
) -> str:
    """The exact text of the learner's notebook for one chapter.

    Args:
        course: the course (its ``nbgrader_config.py`` configures nbgrader's preprocessors).
        chapter: the chapter to release.
        stamp: the source stamp to record (computed when omitted).
        python_version: the kernel's Python version for ``language_info`` (None: this one's).

    Returns:
        The notebook file's text, ending with a newline.

    Raises:
        CourseError: if nbgrader rejects the source (a marker outside a graded cell, an
            unterminated region, bad metadata).
    """
    import nbformat

    config = _nbgrader_config(course)
    if stamp is None:
        config_bytes = course.config_file.read_bytes() if course.config_file.is_file() else b""
        stamp = _stamp(chapter, config_bytes)
    nb = _read_source(chapter)
    resources: dict = {}
    try:
        for preprocessor in _preprocessors(config, python_version):
            nb, resources = preprocessor.preprocess(nb, resources)
    except Exception as exc:  # nbgrader raises RuntimeError/ValueError/ValidationError
        raise CourseError(f"nbgrader cannot release {chapter.source}: {exc}") from exc
    nb.metadata["autograder"] = {"chapter": chapter.name, "source_stamp": stamp}
    if chapter.language != "en":
        nb.metadata["autograder"]["language"] = chapter.language
    digest = _content_hash(json.loads(nbformat.writes(nb)))
    nb.metadata["autograder"]["release_hash"] = digest
    text = nbformat.writes(nb)
    return text if text.endswith("\n") else text + "\n"


def trust_untouched(notebooks: Path) -> list[Path]:
    """Sign, as ``jupyter trust`` does, every notebook in ``notebooks`` exactly as released.

    Jupyter's server warns "Notebook ... is not trusted" when it opens a notebook this user has
    not signed. An untouched release holds no outputs, so nothing in it can be untrustworthy; a
    notebook with a learner's edits is left alone (JupyterLab signs it each time it saves it).

    Args:
        notebooks: the learners' folder (``notebooks/``).

    Returns:
        The notebooks signed now (those signed before are not repeated).

    Example:
        >>> trust_untouched(Path("notebooks"))  # doctest: +SKIP
        [PosixPath('notebooks/04-training-loop.ipynb')]
    """
    import nbformat
    from nbformat.sign import NotebookNotary

    notary = NotebookNotary()
    signed = []
    for path in sorted(Path(notebooks).glob("*.ipynb")):
        data = _read_json(path)
        if not data or not _is_pristine(data):
            continue
        nb = nbformat.from_dict(data)
        if not notary.check_signature(nb):
            notary.sign(nb)
            signed.append(path)
    return signed


def _preprocessors(config, python_version: str | None = None) -> list:
    from nbgrader.preprocessors import (
        CheckCellMetadata,
        ClearHiddenTests,
        ClearMarkScheme,
        ClearOutput,
        ClearSolutions,
        ComputeChecksums,
        LockCells,
    )

    from autograder.lab import LabReady

    # generate_assignment's order, minus the gradebook (SaveCells), the optional header/footer and
    # test templates, which this course does not use; then LabReady, which nbgrader_config.py
    # appends to generate_assignment's.
    classes = [
        LockCells,
        ClearSolutions,
        ClearOutput,
        CheckCellMetadata,
        ComputeChecksums,
        ClearHiddenTests,
        ClearMarkScheme,
        ComputeChecksums,
        CheckCellMetadata,
    ]
    return [cls(config=config) for cls in classes] + [
        LabReady(config=config, python_version=python_version or "")
    ]


def _nbgrader_config(course: Course):
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    if not course.config_file.is_file():
        return Config()
    loader = PyFileConfigLoader(course.config_file.name, path=str(course.config_file.parent))
    return loader.load_config()


def _read_source(chapter: Chapter):
    """Read a source notebook as nbformat 4.5, giving cells without ids stable ones."""
    import nbformat

    text = chapter.source.read_text(encoding="utf-8")
    nb = nbformat.reads(text, as_version=nbformat.NO_CONVERT)
    if nb.nbformat != 4:
        raise CourseError(f"{chapter.source}: notebook format {nb.nbformat}, expected 4")
    if nb.nbformat_minor < 5:
        # nbformat's own upgrade invents random ids; derive them from the position instead.
        for index, cell in enumerate(nb.cells):
            cell.setdefault("id", f"{chapter.name}-{index}")
        nb.nbformat_minor = 5
    if chapter.language != "en":
        from autograder.i18n import TranslationError, load_catalog, translate_notebook

        try:
            nb = translate_notebook(nb, load_catalog(chapter.catalog, chapter.language))
        except TranslationError as exc:
            raise CourseError(f"cannot release the {chapter.language} edition: {exc}") from None
    return nb


def _stamp(chapter: Chapter, config_bytes: bytes) -> str:
    from importlib.metadata import version

    digest = hashlib.sha256()
    for part in (f"format={RELEASE_FORMAT}", f"nbgrader={version('nbgrader')}"):
        digest.update(part.encode() + b"\0")
    digest.update(config_bytes + b"\0")
    digest.update(chapter.source.read_bytes())
    if chapter.language != "en":  # the English release's stamp stays what it always was
        catalog = chapter.catalog
        digest.update(b"\0" + (catalog.read_bytes() if catalog.is_file() else b""))
    return digest.hexdigest()


def _content_hash(data: dict) -> str:
    data = json.loads(json.dumps(data))
    data.get("metadata", {}).get("autograder", {}).pop("release_hash", None)
    canonical = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _read_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return {}


def _is_pristine(data: dict) -> bool:
    """True when a released notebook is byte-for-byte what release wrote (no learner edits)."""
    meta = data.get("metadata", {}).get("autograder", {}) if isinstance(data, dict) else {}
    recorded = meta.get("release_hash") if isinstance(meta, dict) else None
    return isinstance(recorded, str) and recorded == _content_hash(data)


def _python_of(data: dict) -> str | None:
    """The kernel Python version a released notebook records (None when it records none)."""
    info = data.get("metadata", {}).get("language_info", {}) if isinstance(data, dict) else {}
    version = info.get("version") if isinstance(info, dict) else None
    return version if isinstance(version, str) else None


def _stamp_of(data: dict) -> str | None:
    meta = data.get("metadata", {}).get("autograder", {}) if isinstance(data, dict) else {}
    return meta.get("source_stamp") if isinstance(meta, dict) else None


def _backup(target: Path, notebooks: Path) -> Path:
    folder = notebooks / _BACKUP_DIR
    folder.mkdir(parents=True, exist_ok=True)
    backup = folder / f"{target.stem}-{time.strftime('%Y%m%d-%H%M%S')}.ipynb"
    shutil.copy2(target, backup)
    return backup


def _write_atomic(target: Path, text: str) -> None:
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(target)


def _handle_extras(notebooks: Path, expected: set[str], *, check: bool, report) -> None:
    if not notebooks.is_dir():
        return
    for path in sorted(notebooks.glob("*.ipynb")):
        if path.name in expected:
            continue
        data = _read_json(path) or {}
        generated = isinstance(data.get("metadata", {}).get("autograder"), dict)
        if check:
            report.extra.append(path)
            report.messages.append(f"extra: {path} (no chapter in course/source/ releases it)")
        elif generated and _is_pristine(data):
            path.unlink()
            report.removed.append(path)
            report.messages.append(f"removed {path}: its chapter is no longer in course/source/")
        elif generated:
            report.extra.append(path)
            report.messages.append(
                f"kept {path}: its chapter is no longer in course/source/, but it has your changes"
            )
