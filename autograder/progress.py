"""The learner's progress: each exercise's best points from Check, and the hints taken.

One plain JSON file, ``progress.json``, in the folder of the notebooks it is about, owned by the
learner: deleting it loses nothing else (the notebooks, and grading, never read it). It is
written atomically under a lock, so two kernels checking at once cannot corrupt it; a file that
is not ours (broken JSON, another layout) is set aside as ``progress.json.broken`` and a new one
started, never silently merged.

Layout::

    {"format": 1,
     "chapters": {"04-training-loop": {
         "evaluate": {"best": 3, "max": 3, "last": 0, "checks": 2, "hints": 1,
                      "when": "2026-12-07T14:02:11"}}}}
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import re
import tempfile
import time
from pathlib import Path

from autograder.verdict import CheckResult, words

__all__ = [
    "FILE_NAME",
    "course_exercises",
    "load",
    "progress_file",
    "record_check",
    "record_hint",
    "summary_html",
    "summary_text",
]

FILE_NAME = "progress.json"
_FORMAT = 1


def progress_file(notebook: str | os.PathLike) -> Path:
    """The progress file for a notebook: ``progress.json`` beside it."""
    return Path(notebook).resolve().parent / FILE_NAME


def load(path: str | os.PathLike) -> dict:
    """The progress record at ``path`` (an empty one when there is none or it is not ours)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"format": _FORMAT, "chapters": {}}
    if not isinstance(data, dict) or not isinstance(data.get("chapters"), dict):
        return {"format": _FORMAT, "chapters": {}}
    return data


@contextlib.contextmanager
def _updating(path: Path):
    """Read, let the caller change, and write back atomically, under a lock."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = path.with_name(f".{path.name}.lock")  # hidden: the file browser shows the record only
    with open(lock, "a+") as handle:
        try:
            import fcntl

            fcntl.flock(handle, fcntl.LOCK_EX)
        except ImportError:  # not POSIX: writes stay atomic, only concurrent ones may race
            pass
        data = load(path)
        if path.exists() and not data["chapters"] and not _ours(path):
            os.replace(path, path.with_name(path.name + ".broken"))  # kept, never merged
        yield data
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".progress-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(data, out, indent=1, ensure_ascii=False, sort_keys=True)
                out.write("\n")
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def _ours(path: Path) -> bool:
    """True when the file is a progress record (perhaps an empty one)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and isinstance(data.get("chapters"), dict)


def _entry(data: dict, chapter: str, name: str) -> dict:
    chapters = data.setdefault("chapters", {})
    exercises = chapters.setdefault(chapter, {})
    entry = exercises.setdefault(name, {})
    for key in ("best", "max", "last", "checks", "hints"):
        entry.setdefault(key, 0)
    return entry


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S")


def record_check(notebook: str | os.PathLike, result: CheckResult) -> Path | None:
    """Record a check's points (the best so far is kept) in the notebook's progress file.

    Returns:
        The file written, or None when the result is not a verdict (it could not check).
    """
    if result.error is not None or result.chapter is None:
        return None
    path = progress_file(notebook)
    with _updating(path) as data:
        entry = _entry(data, result.chapter, result.name)
        entry["best"] = max(float(entry["best"]), float(result.points))
        entry["max"], entry["last"] = float(result.max_points), float(result.points)
        entry["checks"] = int(entry["checks"]) + 1
        entry["when"] = _now()
    return path


def record_hint(notebook: str | os.PathLike, chapter: str, name: str, step: int) -> Path:
    """Record that hint ``step`` (1: the clause, 2: the section) of an exercise was shown."""
    path = progress_file(notebook)
    with _updating(path) as data:
        entry = _entry(data, chapter, name)
        entry["hints"] = max(int(entry["hints"]), int(step))
        entry["when"] = _now()
    return path


def course_exercises(folder: str | os.PathLike) -> dict[str, list[tuple[str, float]]]:
    """{chapter: [(exercise, points), ...]} of the released notebooks in ``folder``, in order."""
    found: dict[str, list[tuple[str, float]]] = {}
    for path in sorted(Path(folder).glob("[0-9][0-9]-*.ipynb")):
        try:
            notebook = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        chapter = notebook.get("metadata", {}).get("autograder", {}).get("chapter") or path.stem
        rows = []
        for cell in notebook.get("cells", []):
            meta = cell.get("metadata", {}).get("nbgrader", {})
            grade_id = meta.get("grade_id") or ""
            if meta.get("grade") and grade_id.endswith("_tests"):
                name = re.sub(r"^ch\d{2}_", "", grade_id[: -len("_tests")])
                rows.append((name, float(meta.get("points", 0))))
        if rows:
            found[chapter] = rows
    return found


def _rows(data: dict, chapter: str, exercises: list[tuple[str, float]] | None):
    recorded = data.get("chapters", {}).get(chapter, {})
    names = [n for n, _ in exercises] if exercises else sorted(recorded)
    maxima = dict(exercises or [])
    for name in names:
        entry = recorded.get(name)
        yield (
            name,
            entry,
            float(entry.get("max", maxima.get(name, 0)) if entry else maxima.get(name, 0)),
        )


def summary_text(
    data: dict,
    language: str = "en",
    exercises: dict[str, list] | None = None,
    chapters: list[str] | None = None,
) -> str:
    """The progress as a table for a terminal: per chapter, each exercise's best, checks, hints."""
    w = words(language)
    chapters = chapters or sorted(set(data.get("chapters", {})) | set(exercises or {}))
    lines, total, possible = [], 0.0, 0.0
    for chapter in chapters:
        rows = list(_rows(data, chapter, (exercises or {}).get(chapter)))
        if not rows:
            continue
        got = sum(float(e["best"]) for _, e, _ in rows if e)
        out_of = sum(m for _, _, m in rows)
        total, possible = total + got, possible + out_of
        lines.append(f"{w['chapter'].format(chapter=chapter)}: {got:g} / {out_of:g}")
        width = max(len(n) for n, _, _ in rows)
        for name, entry, maximum in rows:
            if entry is None:
                lines.append(f"  {name:<{width}}  {'-':>7}  {w['not_checked']}")
            else:
                lines.append(
                    f"  {name:<{width}}  {float(entry['best']):g} / {maximum:g}".ljust(width + 12)
                    + f"  {w['checks']} {entry['checks']}, {w['hints']} {entry['hints']}"
                )
    lines.append(f"{w['total']}: {total:g} / {possible:g}")
    return "\n".join(lines)


def summary_html(
    data: dict,
    language: str = "en",
    exercises: dict[str, list] | None = None,
    chapters: list[str] | None = None,
) -> str:
    """The progress as an HTML table with a bar per exercise (the lab's Progress panel)."""
    w, esc = words(language), html.escape
    chapters = chapters or sorted(set(data.get("chapters", {})) | set(exercises or {}))
    parts = [f"<div class='autograder-progress'><b>{esc(w['course'])}</b>"]
    for chapter in chapters:
        rows = list(_rows(data, chapter, (exercises or {}).get(chapter)))
        if not rows:
            continue
        got = sum(float(e["best"]) for _, e, _ in rows if e)
        out_of = sum(m for _, _, m in rows)
        parts.append(
            f"<p style='margin:.4em 0 .1em'>{esc(w['chapter'].format(chapter=chapter))}: "
            f"{got:g} / {out_of:g}</p><table style='border-collapse:collapse'>"
        )
        for name, entry, maximum in rows:
            best = float(entry["best"]) if entry else 0.0
            width = int(100 * best / maximum) if maximum else 0
            color = "#1a7f37" if entry and best == maximum else "#d4a72c"
            bar = (
                f"<div style='width:100px;height:.7em;background:#eee;display:inline-block'>"
                f"<div style='width:{width}px;height:100%;background:{color}'></div></div>"
            )
            if entry is None:
                detail = esc(w["not_checked"])
            else:
                detail = esc(f"{w['checks']} {entry['checks']}, {w['hints']} {entry['hints']}")
            parts.append(
                f"<tr class='progress-row' data-exercise='{esc(name, quote=True)}'>"
                f"<td style='padding:0 .6em 0 0'>{esc(name)}</td><td>{bar}</td>"
                f"<td style='padding:0 .6em'>{best:g} / {maximum:g}</td>"
                f"<td style='color:#666'>{detail}</td></tr>"
            )
        parts.append("</table>")
    parts.append("</div>")
    return "".join(parts)
