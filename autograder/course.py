"""The course on disk: chapters, their source notebooks, and what their cells are.

Layout (nbgrader's own): ``course/source/NN-name/NN-name.ipynb`` holds the instructor's notebook for
chapter NN; ``notebooks/NN-name.ipynb`` is the learner's copy that ``python -m autograder release``
generates. Graded cells carry nbgrader's metadata; every ``grade_id`` starts with ``chNN_``.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Chapter", "Course", "CourseError", "default_course_root"]

_CHAPTER_NAME = re.compile(r"^(\d{2})-[a-z0-9][a-z0-9-]*$")
_GRADE_ID_PREFIX = re.compile(r"^ch(\d{2})_")
BEGIN_SOLUTION, END_SOLUTION = "BEGIN SOLUTION", "END SOLUTION"
BEGIN_HIDDEN, END_HIDDEN = "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"
# Secret lines shorter than this ("pass", ")", "return x") are too common to prove a leak.
_MIN_SECRET_LINE = 8


class CourseError(ValueError):
    """The course directory or a chapter in it does not follow the course layout."""


def default_course_root() -> Path:
    """The course root used when ``--course`` is not given.

    Returns:
        ``./course`` when the current directory holds one, else the ``course/`` folder next to the
        installed ``autograder`` package (the repository's own).

    Example:
        >>> default_course_root().name
        'course'
    """
    here = Path("course")
    if (here / "source").is_dir():
        return here
    return Path(__file__).resolve().parents[1] / "course"


@dataclass(frozen=True)
class Chapter:
    """One chapter: a source notebook ``course/source/NN-name/NN-name.ipynb``.

    Attributes:
        name: the assignment name, e.g. ``"04-training-loop"``.
        source: path of the instructor's source notebook (always the English one).
        language: the edition, ``"en"`` or a language of :data:`autograder.i18n.LANGUAGES`,
            whose text comes from the catalog ``course/translations/<language>/<name>.yml``.
    """

    name: str
    source: Path
    language: str = "en"

    @property
    def number(self) -> int:
        """The chapter number (4 for ``04-training-loop``)."""
        return int(self.name[:2])

    @property
    def prefix(self) -> str:
        """The prefix of every grade_id in this chapter, e.g. ``"ch04_"``."""
        return f"ch{self.name[:2]}_"

    @property
    def released_name(self) -> str:
        """File name of the learner's notebook in ``notebooks/``."""
        return f"{self.name}.ipynb"

    @property
    def catalog(self) -> Path | None:
        """The translation catalog of this edition (None for English)."""
        if self.language == "en":
            return None
        from autograder.i18n import catalog_path

        return catalog_path(self.source.parents[2], self.name, self.language)

    def in_language(self, language: str) -> Chapter:
        """This chapter in another edition.

        Raises:
            CourseError: for a language the course has no edition in.
        """
        from autograder.i18n import LANGUAGES

        if language not in LANGUAGES:
            known = ", ".join(f"{code} ({name})" for code, name in LANGUAGES.items())
            raise CourseError(f"no {language!r} edition of the course; the editions are {known}")
        return dataclasses.replace(self, language=language)

    def read_source(self) -> dict:
        """The source notebook as plain JSON data (no nbformat needed), in this edition.

        Raises:
            CourseError: if the notebook is broken, or (another edition) its catalog is missing,
                incomplete or stale.
        """
        nb = read_json_notebook(self.source)
        if self.language == "en":
            return nb
        from autograder.i18n import TranslationError, load_catalog, translate_notebook

        try:
            return translate_notebook(nb, load_catalog(self.catalog, self.language))
        except TranslationError as exc:
            raise CourseError(str(exc)) from None


@dataclass(frozen=True)
class Course:
    """An nbgrader course root (the folder holding ``nbgrader_config.py`` and ``source/``).

    Args:
        root: the course root, e.g. ``Path("course")``.
        language: the edition its chapters are read in (``"en"``, the source, by default).

    Example:
        >>> course = Course(default_course_root())
        >>> course.source_dir.name
        'source'
    """

    root: Path
    language: str = "en"

    @property
    def source_dir(self) -> Path:
        """``<root>/source``: one folder per chapter."""
        return self.root / "source"

    @property
    def config_file(self) -> Path:
        """``<root>/nbgrader_config.py``."""
        return self.root / "nbgrader_config.py"

    def chapters(self) -> list[Chapter]:
        """Every chapter under ``source/``, sorted by name.

        Returns:
            A list of :class:`Chapter`.

        Raises:
            CourseError: if ``source/`` is missing or a chapter folder breaks the layout.
        """
        if not self.source_dir.is_dir():
            raise CourseError(
                f"course source folder {self.source_dir} does not exist: pass --course DIR with "
                "the folder that holds nbgrader_config.py and source/"
            )
        chapters = []
        for folder in sorted(p for p in self.source_dir.iterdir() if p.is_dir()):
            if folder.name.startswith((".", "_")):
                continue
            if not _CHAPTER_NAME.match(folder.name):
                raise CourseError(
                    f"chapter folder {folder} is not named NN-name (two digits, a dash, lowercase "
                    "words): rename it, e.g. to 04-training-loop"
                )
            notebook = folder / f"{folder.name}.ipynb"
            if not notebook.is_file():
                raise CourseError(
                    f"chapter folder {folder} has no {notebook.name}: each chapter holds one "
                    "notebook named like its folder"
                )
            chapter = Chapter(folder.name, notebook)
            chapters.append(
                chapter.in_language(self.language) if self.language != "en" else chapter
            )
        return chapters

    def chapter(self, key: str | int) -> Chapter:
        """Look a chapter up by name (``"04-training-loop"``) or number (``4`` or ``"04"``).

        Raises:
            CourseError: if no chapter matches; the message lists the chapters there are.
        """
        chapters = self.chapters()
        for chapter in chapters:
            if str(key) in (chapter.name, chapter.name[:2]) or key == chapter.number:
                return chapter
        names = ", ".join(c.name for c in chapters) or "none"
        raise CourseError(f"no chapter {key!r} in {self.source_dir} (chapters: {names})")

    def chapter_of(self, nb: dict) -> Chapter:
        """The chapter a (learner's) notebook belongs to, in the notebook's edition.

        Read from the ``autograder.chapter`` metadata that ``release`` writes, else from the
        ``chNN_`` prefix of its grade_ids; the edition from ``autograder.language`` (English when
        the notebook names none), so a Chinese notebook is graded with Chinese messages.

        Raises:
            CourseError: if the notebook names no chapter, several, or one the course lacks.
        """
        from autograder.i18n import notebook_language

        language = notebook_language(nb)
        declared = nb.get("metadata", {}).get("autograder", {}).get("chapter")
        if isinstance(declared, str) and declared:
            return self.chapter(declared).in_language(language)
        numbers = set()
        for cell in nb.get("cells", []):
            grade_id = cell_grade_id(cell)
            match = _GRADE_ID_PREFIX.match(grade_id or "")
            if match:
                numbers.add(match.group(1))
        if not numbers:
            raise CourseError(
                "cannot tell which chapter this notebook belongs to: it has no autograder "
                "metadata and no graded cells (grade_id chNN_...); submit the notebook released "
                "in notebooks/"
            )
        if len(numbers) > 1:
            raise CourseError(
                f"the notebook mixes graded cells of chapters {', '.join(sorted(numbers))}: "
                "submit one chapter's notebook"
            )
        return self.chapter(numbers.pop()).in_language(language)


def read_json_notebook(path: Path) -> dict:
    """Read a notebook file as plain JSON, with a clear error when it is not one.

    Raises:
        CourseError: if the file is missing, not UTF-8 JSON, or not a notebook.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CourseError(f"{path}: no such file") from None
    except UnicodeDecodeError as exc:
        raise CourseError(f"{path}: not a text file ({exc.reason}); expected an .ipynb") from None
    if not text.strip():
        raise CourseError(f"{path}: the file is empty; save the notebook again from JupyterLab")
    try:
        nb = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CourseError(
            f"{path}: not valid notebook JSON ({exc.msg} at line {exc.lineno} column "
            f"{exc.colno}); the file is damaged: download or save it again from JupyterLab"
        ) from None
    if isinstance(nb, dict) and isinstance(nb.get("nbformat"), int) and nb["nbformat"] < 4:
        raise CourseError(
            f"{path}: an old notebook format ({nb['nbformat']}); upgrade it with `jupyter "
            f"nbconvert --to notebook --nbformat 4 --output upgraded.ipynb {path}` and grade that"
        )
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise CourseError(f"{path}: valid JSON but not a notebook (no list of cells)")
    if nb.get("nbformat") != 4:
        raise CourseError(f"{path}: notebook format {nb.get('nbformat')!r}, expected 4")
    for cell in nb["cells"]:
        if not isinstance(cell, dict) or "source" not in cell:
            raise CourseError(f"{path}: a cell is malformed (no source)")
        cell["source"] = cell_source(cell)
        cell.setdefault("metadata", {})
    return nb


def cell_source(cell: dict) -> str:
    """A cell's source as one string (notebook files may store it as a list of lines)."""
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _nbgrader(cell: dict) -> dict:
    meta = cell.get("metadata", {}).get("nbgrader")
    return meta if isinstance(meta, dict) else {}


def cell_grade_id(cell: dict) -> str | None:
    """The nbgrader grade_id of a cell, or None for an ordinary cell."""
    grade_id = _nbgrader(cell).get("grade_id")
    return grade_id if isinstance(grade_id, str) and grade_id else None


def is_solution_cell(cell: dict) -> bool:
    """True for an autograded answer cell (nbgrader ``solution`` and not ``grade``)."""
    meta = _nbgrader(cell)
    return bool(meta.get("solution")) and not meta.get("grade") and cell_grade_id(cell) is not None


def is_test_cell(cell: dict) -> bool:
    """True for an autograder test cell (nbgrader ``grade`` and not ``solution``)."""
    meta = _nbgrader(cell)
    return (
        cell.get("cell_type") == "code"
        and bool(meta.get("grade"))
        and not meta.get("solution")
        and cell_grade_id(cell) is not None
    )


def is_locked_cell(cell: dict) -> bool:
    """True for a cell nbgrader restores from the source when grading (tests, read-only cells)."""
    meta = _nbgrader(cell)
    if cell_grade_id(cell) is None or meta.get("solution"):
        return False
    return bool(meta.get("grade") or meta.get("locked"))


def cell_points(cell: dict) -> float:
    """Points of a test cell (0 for other cells)."""
    try:
        return float(_nbgrader(cell).get("points", 0) or 0)
    except (TypeError, ValueError):
        return 0.0


def exercise_id(test_grade_id: str) -> str:
    """The exercise a test cell grades: its grade_id without the ``_tests`` suffix."""
    return test_grade_id[: -len("_tests")] if test_grade_id.endswith("_tests") else test_grade_id


def region_lines(source: str, begin: str, end: str, *, inside: bool = True) -> list[str]:
    """The lines strictly between ``### <begin>`` and ``### <end>`` markers of a cell source
    (with ``inside=False``: every line outside those regions, markers dropped)."""
    lines, within = [], False
    for line in source.split("\n"):
        if begin in line:
            within = True
        elif end in line:
            within = False
        elif within == inside:
            lines.append(line)
    return lines


def secret_lines(nb: dict) -> set[str]:
    """Lines of a source notebook that must never reach a learner's notebook.

    Every stripped line inside a solution region or a hidden-test region, except short ones and
    ones that also appear outside those regions (an ``import torch`` that the setup cell shows too).

    Example:
        >>> nb = {"cells": [{"cell_type": "code", "metadata": {}, "source":
        ...       "def f():\\n    ### BEGIN SOLUTION\\n    return 40 + 2  # answer\\n"
        ...       "    ### END SOLUTION"}]}
        >>> sorted(secret_lines(nb))
        ['return 40 + 2  # answer']
    """
    secret, public = set(), set()
    for cell in nb.get("cells", []):
        source = cell_source(cell)
        hidden = region_lines(source, BEGIN_SOLUTION, END_SOLUTION)
        hidden += region_lines(source, BEGIN_HIDDEN, END_HIDDEN)
        secret |= {line.strip() for line in hidden}
        public |= public_lines(source)
    return {line for line in secret - public if len(line) >= _MIN_SECRET_LINE}


def public_lines(source: str) -> set[str]:
    """The stripped lines of a cell source outside its solution and hidden-test regions."""
    lines, inside = set(), False
    for line in source.split("\n"):
        if BEGIN_SOLUTION in line or BEGIN_HIDDEN in line:
            inside = True
        elif END_SOLUTION in line or END_HIDDEN in line:
            inside = False
        elif not inside:
            lines.add(line.strip())
    return lines
