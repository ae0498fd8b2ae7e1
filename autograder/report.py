"""The class report: what a class got wrong, where it needed hints, what to look at by hand.

:func:`build_report` turns the submissions of one or more marks files (see
:mod:`autograder.marks`) into plain data; :func:`write_report` writes it as ``report.json`` and a
static ``index.html`` with its plots as PNG files beside it (``plots/``), which opens offline.

Per chapter and exercise: the distribution of points (a picture per chapter: the total, then each
exercise), the most common failing checks with how many learners hit each, and the hints learners
took where their ``progress.json`` came with the notebook. Then the submissions that failed to
grade and why, every ``review:`` flag with a link to the learner's feedback page, and the pairs
of submissions whose exercise code is nearly the same in structure, or that match a companion
function (see :mod:`autograder.similarity`): the score and both pieces of code side by side, for
a person to judge; no mark is changed.

Failing checks are grouped by what the hidden check says, not its exact text: each exercise's
feedback is split into its checks (joined by " | "), a leading exception type is dropped (the
first check of an exercise carries it, the next ones do not), and quoted values become ``'…'``,
shapes and tuples of numbers ``(…)``, lists of numbers ``[…]`` and other numbers ``N`` (see
:func:`check_key`). "mean differs by 0.31 at seed 2" and "mean differs by 1.5 at seed 0" are then
one check, hit by two learners.
"""

from __future__ import annotations

import html
import json
import os
import re
import statistics
from collections import Counter, defaultdict
from pathlib import Path

from autograder.course import CourseError, cell_grade_id, cell_source, is_solution_cell

__all__ = ["build_report", "check_key", "write_report"]

_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`")
_SHAPE = re.compile(
    r"torch\.Size\(\[[\d,\s]*\]\)"
    r"|[\(\[]\s*-?\d[\d.eE+\-]*(?:\s*,\s*-?\d[\d.eE+\-]*)*\s*,?\s*[\)\]]"
)

_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?%?(?![\w])")
_SPLIT = " | "
# the exception's type, which the first failing check of an exercise carries and the next ones not
_ERROR_TYPE = re.compile(r"^(?:[A-Z]\w*(?:Error|Exception|Warning)|AssertionError): ")
_TOP_CHECKS = 8
_TOP_PAIRS = 50


def check_key(message: str) -> str:
    """The failing check a feedback message stands for: its values replaced by placeholders.

    Example:
        >>> check_key("AssertionError: loss 0.52 != 0.31 for shape (4, 3) and key 'fc.weight'")
        "loss N != N for shape (…) and key '…'"
    """
    text = _ERROR_TYPE.sub("", message.strip())
    text = _QUOTED.sub(lambda m: m.group(0)[0] + "…" + m.group(0)[-1], text)
    text = _SHAPE.sub(lambda m: "(…)" if m.group(0).endswith(")") else "[…]", text)
    text = _NUMBER.sub("N", text)
    return " ".join(text.split())


def _resolve(path: str, roots: list[Path]) -> Path | None:
    candidate = Path(path)
    if candidate.is_absolute():
        return candidate if candidate.is_file() else None
    for root in [Path.cwd(), *roots]:
        if (root / candidate).is_file():
            return root / candidate
    return None


def _solutions(path: Path) -> dict[str, str]:
    from autograder.course import read_json_notebook

    try:
        nb = read_json_notebook(path)
    except CourseError:
        return {}
    return {cell_grade_id(c): cell_source(c) for c in nb.get("cells", []) if is_solution_cell(c)}


def _distribution(values: list[float]) -> dict[str, int]:
    counts = Counter(values)
    return {f"{v:g}": counts[v] for v in sorted(counts)}


def build_report(
    submissions: list[dict],
    *,
    versions: dict[str, str] | None = None,
    notes: list[str] | None = None,
    roots: list[Path] = (),
    feedback_dir: str | None = None,
    similarity: bool = True,
    threshold: float | None = None,
) -> dict:
    """The class report as plain data (what ``report.json`` holds).

    Args:
        submissions: result dicts from marks files (see :func:`autograder.marks.combine`).
        versions: chapter -> course version. notes: remarks for the reader.
        roots: folders to look for submission notebooks in, after the current one (relative
            paths in marks files are relative to where ``grade`` ran).
        feedback_dir: the folder of the feedback pages, for the review links.
        similarity: look for copied code (needs the notebooks).
        threshold: similarity from which a pair is listed (default
            :data:`autograder.similarity.THRESHOLD`).

    Returns:
        A dict: ``chapters`` (per exercise: points, failing checks, hints), ``not_graded``,
        ``reviews``, ``copies``, ``companion``, ``notes``.
    """
    from autograder import similarity as sim

    threshold = sim.THRESHOLD if threshold is None else threshold
    by_chapter: dict[str, list[dict]] = defaultdict(list)
    not_graded, reviews = [], []
    for entry in submissions:
        learner = entry.get("learner") or Path(entry["path"]).parent.name
        link = None
        if feedback_dir and entry.get("feedback"):
            link = os.path.join(feedback_dir, entry["feedback"])
        if not entry["graded"]:
            not_graded.append({"path": entry["path"], "learner": learner, "error": entry["error"]})
            continue
        by_chapter[entry.get("chapter") or "?"].append(entry)
        for flag in entry.get("flags", []):
            reviews.append(
                {
                    "path": entry["path"],
                    "learner": learner,
                    "chapter": entry.get("chapter"),
                    "flag": flag,
                    "feedback": link,
                }
            )
    chapters = []
    codes: dict[tuple[str, str], dict[int, str]] = defaultdict(dict)
    missing_code = 0
    for chapter in sorted(by_chapter):
        entries = by_chapter[chapter]
        order: dict[str, dict] = {}
        for entry in entries:
            for exercise in entry["exercises"]:
                order.setdefault(exercise["grade_id"], exercise)
        exercises = []
        for grade_id, first in order.items():
            points, checks, learners_with = [], Counter(), defaultdict(set)
            examples: dict[str, str] = {}
            hints, records, checks_run = Counter(), 0, []
            for index, entry in enumerate(entries):
                found = [e for e in entry["exercises"] if e["grade_id"] == grade_id]
                if not found:
                    continue
                exercise = found[0]
                points.append(float(exercise["points"]))
                if exercise["status"] != "passed":
                    for part in dict.fromkeys(exercise["feedback"].split(_SPLIT)):
                        key = check_key(part)
                        learners_with[key].add(index)
                        examples.setdefault(key, part)
                progress = (entry.get("progress") or {}).get(first["name"])
                if progress is not None:
                    records += 1
                    hints[int(progress.get("hints", 0))] += 1
                    checks_run.append(int(progress.get("checks", 0)))
            checks = sorted(learners_with.items(), key=lambda kv: (-len(kv[1]), kv[0]))
            exercises.append(
                {
                    "grade_id": grade_id,
                    "name": first["name"],
                    "max_points": first["max_points"],
                    "learners": len(points),
                    "mean": round(statistics.fmean(points), 3) if points else 0.0,
                    "full_marks": sum(p == first["max_points"] for p in points),
                    "distribution": _distribution(points),
                    "failing_checks": [
                        {"check": key, "example": examples[key], "learners": len(who)}
                        for key, who in checks[:_TOP_CHECKS]
                    ],
                    "other_failing_checks": max(0, len(checks) - _TOP_CHECKS),
                    "hints": {
                        "records": records,
                        "took": {str(step): hints[step] for step in sorted(hints)},
                        "mean_checks": round(statistics.fmean(checks_run), 2)
                        if checks_run
                        else None,
                    },
                }
            )
        totals = [float(e["points"]) for e in entries]
        chapters.append(
            {
                "chapter": chapter,
                "version": (versions or {}).get(chapter),
                "graded": len(entries),
                "max_points": max((e["max_points"] for e in entries), default=0),
                "mean": round(statistics.fmean(totals), 3) if totals else 0.0,
                "median": statistics.median(totals) if totals else 0.0,
                "distribution": _distribution(totals),
                "exercises": exercises,
            }
        )
        if similarity:
            for index, entry in enumerate(entries):
                path = _resolve(entry["path"], list(roots))
                if path is None:
                    missing_code += 1
                    continue
                for grade_id, code in _solutions(path).items():
                    if grade_id in order:
                        codes[(chapter, grade_id)][index] = code

    copies, companion, more_pairs = [], [], 0
    for (chapter, grade_id), found in codes.items():
        entries = by_chapter[chapter]
        pairs = sim.similar_pairs(found, threshold)
        more_pairs += max(0, len(pairs) - _TOP_PAIRS)
        for a, b, score in pairs[:_TOP_PAIRS]:
            copies.append(
                {
                    "chapter": chapter,
                    "grade_id": grade_id,
                    "score": round(score, 3),
                    "a": {"path": entries[a]["path"], "learner": entries[a].get("learner")},
                    "b": {"path": entries[b]["path"], "learner": entries[b].get("learner")},
                    "code_a": found[a],
                    "code_b": found[b],
                }
            )
        for index, code in found.items():
            for definition, name, score in sim.companion_matches(code, threshold):
                companion.append(
                    {
                        "chapter": chapter,
                        "grade_id": grade_id,
                        "path": entries[index]["path"],
                        "learner": entries[index].get("learner"),
                        "definition": definition,
                        "companion": name,
                        "score": round(score, 3),
                        "code": code,
                        "companion_code": sim.companion_sources()[name],
                    }
                )
    copies.sort(key=lambda c: (-c["score"], c["chapter"], c["grade_id"], c["a"]["path"]))
    notes = list(notes or [])
    if more_pairs:
        notes.append(
            f"{more_pairs} more similar pairs are left out: only the {_TOP_PAIRS} most similar "
            "pairs of each exercise are listed"
        )
    if similarity and missing_code:
        notes.append(
            f"{missing_code} graded notebooks were not found, so their code was not compared "
            "(run the report where `grade` ran, or pass --root with the folder it ran in)"
        )
    return {
        "format": 1,
        "course_versions": dict(versions or {}),
        "submissions": len(submissions),
        "graded": len(submissions) - len(not_graded),
        "notes": notes,
        "chapters": chapters,
        "not_graded": not_graded,
        "reviews": reviews,
        "copies": copies,
        "companion": companion,
        "threshold": threshold,
    }


def _plot_chapter(chapter: dict, target: Path) -> None:
    """One PNG: the chapter's total points, then each exercise's, as bar charts of learners."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [("total", chapter["distribution"], chapter["max_points"])] + [
        (e["name"], e["distribution"], e["max_points"]) for e in chapter["exercises"]
    ]
    columns = min(4, len(panels))
    rows = -(-len(panels) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(3.2 * columns, 2.4 * rows), squeeze=False)
    for ax in axes.flat[len(panels) :]:
        ax.axis("off")
    for ax, (name, distribution, top) in zip(axes.flat, panels, strict=False):
        xs = [float(k) for k in distribution]
        colors = ["tab:green" if x == top else "tab:red" if x == 0 else "tab:orange" for x in xs]
        ax.bar(xs, list(distribution.values()), width=max(0.4, top / 25), color=colors)
        ax.set_xlim(-0.6, top + 0.6)
        ax.set_title(f"{name} (of {top:g})", fontsize=9)
        ax.set_xlabel("points", fontsize=8)
        ax.set_ylabel("learners", fontsize=8)
        ax.tick_params(labelsize=7)
    fig.suptitle(chapter["chapter"], fontsize=11)
    fig.tight_layout()
    fig.savefig(target, dpi=80)
    plt.close(fig)


_STYLE = (
    "body{font-family:sans-serif;max-width:75em;margin:2em auto;padding:0 1em}"
    "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.3em .6em;"
    "text-align:left;vertical-align:top}pre{background:#f6f6f6;padding:.5em;overflow-x:auto;"
    "font-size:.85em;margin:0}.pair{display:grid;grid-template-columns:1fr 1fr;gap:.6em}"
    "img{max-width:100%}.note{color:#555}"
)


def _html(report: dict, plots: dict[str, str], out: Path) -> str:
    esc = html.escape

    def link(target: str | None, text: str) -> str:
        if not target:
            return esc(text)
        href = Path(os.path.relpath(target, out)).as_posix()
        return f"<a href='{esc(href)}'>{esc(text)}</a>"

    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<title>Class report</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>Class report</h1>",
        f"<p>{report['graded']} of {report['submissions']} submissions graded; "
        f"{len(report['reviews'])} review flags; {len(report['copies'])} similar pairs; "
        f"{len(report['companion'])} matches of companion code.</p>",
    ]
    parts += [f"<p class='note'>note: {esc(n)}</p>" for n in report["notes"]]
    for chapter in report["chapters"]:
        name = chapter["chapter"]
        parts.append(f"<h2 id='{esc(name)}'>{esc(name)}</h2>")
        version = f", course version {esc(chapter['version'])}" if chapter["version"] else ""
        parts.append(
            f"<p>{chapter['graded']} graded, mean {chapter['mean']:g} of "
            f"{chapter['max_points']:g}, median {chapter['median']:g}{version}.</p>"
        )
        if name in plots:
            parts.append(
                f"<img src='{esc(plots[name])}' alt='points of {esc(name)}: the total and each "
                "exercise, learners per score'>"
            )
        for exercise in chapter["exercises"]:
            parts.append(
                f"<h3>{esc(exercise['name'])} ({exercise['full_marks']} of "
                f"{exercise['learners']} full marks, mean {exercise['mean']:g} of "
                f"{exercise['max_points']:g})</h3>"
            )
            if exercise["failing_checks"]:
                parts.append("<table><tr><th>learners</th><th>failing check</th></tr>")
                for check in exercise["failing_checks"]:
                    parts.append(
                        f"<tr><td>{check['learners']}</td><td title='{esc(check['example'])}'>"
                        f"{esc(check['check'])}</td></tr>"
                    )
                parts.append("</table>")
                if exercise["other_failing_checks"]:
                    parts.append(
                        f"<p class='note'>and {exercise['other_failing_checks']} rarer checks "
                        "(report.json lists the top ones only)</p>"
                    )
            hints = exercise["hints"]
            if hints["records"]:
                took = ", ".join(
                    f"{count} {'no hint' if step == '0' else f'hint {step}'}"
                    for step, count in hints["took"].items()
                )
                parts.append(
                    f"<p>hints ({hints['records']} progress records): {esc(took)}; "
                    f"{hints['mean_checks']:g} checks each on average</p>"
                )
    parts.append("<h2 id='not-graded'>Not graded</h2>")
    if report["not_graded"]:
        parts.append("<table><tr><th>submission</th><th>why</th></tr>")
        for item in report["not_graded"]:
            parts.append(f"<tr><td>{esc(item['path'])}</td><td>{esc(item['error'])}</td></tr>")
        parts.append("</table>")
    else:
        parts.append("<p>Every submission was graded.</p>")
    parts.append("<h2 id='review'>Review flags</h2>")
    if report["reviews"]:
        parts.append("<table><tr><th>learner</th><th>chapter</th><th>reason</th></tr>")
        for item in report["reviews"]:
            parts.append(
                f"<tr><td>{link(item['feedback'], item['learner'])}</td>"
                f"<td>{esc(item['chapter'] or '')}</td><td>{esc(item['flag'])}</td></tr>"
            )
        parts.append("</table>")
    else:
        parts.append("<p>No review flags.</p>")
    parts.append(
        f"<h2 id='copies'>Similar code</h2><p class='note'>Pairs whose exercise code has the same "
        f"structure once names, comments, docstrings, formatting and statement order are set "
        f"aside (score {report['threshold']:g} or more, 1 = the same). Points are unchanged: "
        "a person decides.</p>"
    )
    for pair in report["copies"]:
        parts.append(
            f"<h3>{esc(pair['grade_id'])}: {esc(pair['a']['learner'] or pair['a']['path'])} and "
            f"{esc(pair['b']['learner'] or pair['b']['path'])}, score {pair['score']:g}</h3>"
            f"<div class='pair'><div><p>{esc(pair['a']['path'])}</p><pre>{esc(pair['code_a'])}"
            f"</pre></div><div><p>{esc(pair['b']['path'])}</p><pre>{esc(pair['code_b'])}</pre>"
            "</div></div>"
        )
    if not report["copies"]:
        parts.append("<p>No similar pairs.</p>")
    parts.append("<h2 id='companion'>Code matching the companion library</h2>")
    for match in report["companion"]:
        parts.append(
            f"<h3>{esc(match['grade_id'])}: {esc(match['learner'] or match['path'])}'s "
            f"{esc(match['definition'])} and {esc(match['companion'])}, score "
            f"{match['score']:g}</h3><div class='pair'><div><p>{esc(match['path'])}</p><pre>"
            f"{esc(match['code'])}</pre></div><div><p>{esc(match['companion'])}</p><pre>"
            f"{esc(match['companion_code'])}</pre></div></div>"
        )
    if not report["companion"]:
        parts.append("<p>No exercise matches a companion function.</p>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


def write_report(report: dict, out: Path) -> list[Path]:
    """Write ``report.json``, ``index.html`` and ``plots/*.png`` under ``out`` (made if needed).

    Returns:
        The files written.
    """
    out = Path(out)
    (out / "plots").mkdir(parents=True, exist_ok=True)
    plots = {}
    written = []
    for chapter in report["chapters"]:
        target = out / "plots" / f"{chapter['chapter']}.png"
        _plot_chapter(chapter, target)
        plots[chapter["chapter"]] = f"plots/{target.name}"
        chapter["plot"] = plots[chapter["chapter"]]
        written.append(target)
    (out / "report.json").write_text(
        json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    (out / "index.html").write_text(_html(report, plots, out.resolve()), encoding="utf-8")
    return [*written, out / "report.json", out / "index.html"]
