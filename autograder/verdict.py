"""What ``autograder check`` says about one exercise: the verdict, its hint ladder, in two editions.

:class:`CheckResult` is plain data that crosses from the checking process to the learner's lab
(JSON). It renders as text (the terminal) and as HTML (the lab), in the notebook's edition. The
hints are computed with the verdict (:mod:`autograder.hints`) but shown one step at a time:
``hints_shown`` says how many steps the learner asked for.
"""

from __future__ import annotations

import html
from dataclasses import asdict, dataclass, field

__all__ = ["CheckResult", "words"]

_WORDS = {
    "en": {
        "checked": "Checked {name} with the hidden tests: {points} / {max} points",
        "passed": "Every hidden check passed.",
        "failing": "What failed",
        "could_not": "Could not check {name}: {error}",
        "clause": "The contract clause this breaks",
        "section": "Where the chapter teaches it",
        "no_clause": "no single clause of the docstring matches this check: read the contract again",
        "no_section": "no section before the exercise matches: reread the sections before it",
        "ran": "ran {ran} of the notebook's {cells} code cells (the setup, what {name} needs, and its tests) in {seconds:.1f} s",
        "hint_more": "Ask for a hint to see the contract clause it breaks, then where the chapter teaches it.",
        "hint_none": "No more hints: the feedback, the clause and the section are all there is.",
        "check": "Check",
        "hint": "Hint",
        "progress": "Progress",
        "checking": "Checking {name} with the hidden tests…",
        "busy": "A check of {name} is already running: wait for it.",
        "chapter": "Chapter {chapter}",
        "best": "best",
        "hints": "hints",
        "checks": "checks",
        "not_checked": "not checked yet",
        "course": "Your progress",
        "total": "total",
        "exercise": "exercise",
        "note": "note",
        "colon": ": ",
        "no_hidden_tests": "the hidden tests are not on this machine (no course/ folder): Check "
        "needs them. Use Validate for the visible tests, and submit the notebook to be graded",
    },
    "zh": {
        "checked": "已用隐藏测试检查 {name}：{points} / {max} 分",
        "passed": "所有隐藏检查都通过了。",
        "failing": "未通过的检查",
        "could_not": "无法检查 {name}：{error}",
        "clause": "违反的约定条款",
        "section": "本章讲解它的小节",
        "no_clause": "文档字符串中没有哪一条与这项检查直接对应：请再读一遍约定",
        "no_section": "练习之前没有与之对应的小节：请重读练习前面的各节",
        "ran": "运行了笔记本 {cells} 个代码单元中的 {ran} 个（设置、{name} 所需的单元及其测试），用时 {seconds:.1f} 秒",
        "hint_more": "需要提示时，先看它违反的约定条款，再看本章讲解它的小节。",
        "hint_none": "没有更多提示了：反馈、条款和小节就是全部。",
        "check": "检查",
        "hint": "提示",
        "progress": "进度",
        "checking": "正在用隐藏测试检查 {name}……",
        "busy": "{name} 的检查正在运行：请等它结束。",
        "chapter": "章节 {chapter}",
        "best": "最高分",
        "hints": "提示",
        "checks": "检查次数",
        "not_checked": "尚未检查",
        "course": "你的进度",
        "total": "合计",
        "exercise": "练习",
        "note": "注意",
        "colon": "：",
        "no_hidden_tests": "本机上没有隐藏测试（没有 course/ 目录），“检查”需要它们。"
        "请用 Validate 运行可见测试，然后提交笔记本评分",
    },
}


def words(language: str) -> dict[str, str]:
    """The messages of the check in an edition (English for an edition without its own)."""
    return _WORDS.get(language, _WORDS["en"])


def _num(value: float) -> str:
    return f"{value:g}"


@dataclass
class CheckResult:
    """One exercise checked with its hidden tests.

    Attributes:
        notebook: the notebook checked. exercise: the exercise's grade_id (``ch04_evaluate``).
        name: its short name (``evaluate``). chapter: the chapter, when known.
        language: the notebook's edition (messages and feedback are in it).
        points, max_points: what grading would give the exercise as it stands.
        status: as in grading: ``passed``, ``failed``, ``timeout``, ``died``, ``missing``,
            ``not-run``; ``error`` when it could not be checked (``error`` says why).
        failures: each failing check's feedback, in grading's words.
        hints: for each failure, ``{"clause": str | None, "section": {"title", "anchor"} | None}``.
        notes: about what was checked (cells run but not saved, a solution not run).
        ran, cells: code cells run, and in the notebook. seconds: wall time.
        error: why it could not be checked, or None.
    """

    notebook: str
    exercise: str
    name: str
    chapter: str | None = None
    language: str = "en"
    points: float = 0.0
    max_points: float = 0.0
    status: str = "error"
    failures: list[str] = field(default_factory=list)
    hints: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    ran: int = 0
    cells: int = 0
    seconds: float = 0.0
    error: str | None = None

    def to_dict(self) -> dict:
        """Plain data (what ``--json`` prints)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> CheckResult:
        """Rebuild a result from :meth:`to_dict` output."""
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})

    def text(self, hints_shown: int = 0) -> str:
        """The verdict for a terminal, with the first ``hints_shown`` steps of each hint ladder."""
        w = words(self.language)
        if self.error is not None:
            return w["could_not"].format(name=self.name, error=self.error)
        lines = [
            w["checked"].format(name=self.name, points=_num(self.points), max=_num(self.max_points))
        ]
        if not self.failures:
            lines.append("  " + w["passed"])
        for index, failure in enumerate(self.failures):
            lines.append(f"  ✗ {failure}")
            for step, (label, value) in enumerate(self._ladder(index)):
                if step < min(hints_shown, self.hint_steps):
                    lines.append(f"      {label}{w['colon']}{value}")
        lines += [f"  {w['note']}{w['colon']}{note}" for note in self.notes]
        if self.cells:
            lines.append(
                "  "
                + w["ran"].format(
                    ran=self.ran, cells=self.cells, name=self.name, seconds=self.seconds
                )
            )
        return "\n".join(lines)

    __str__ = text

    def _ladder(self, index: int) -> list[tuple[str, str]]:
        w = words(self.language)
        hint = self.hints[index] if index < len(self.hints) else {}
        clause = hint.get("clause") or w["no_clause"]
        section = hint.get("section")
        where = section["title"] if section else w["no_section"]
        return [(w["clause"], clause), (w["section"], where)]

    @property
    def hint_steps(self) -> int:
        """How many hint steps there are (0 when nothing failed, or nothing is written yet)."""
        return 2 if self.hints else 0

    def html(self, hints_shown: int = 0) -> str:
        """The verdict for the lab: points, each failing check, and the hints asked for."""
        w, esc = words(self.language), html.escape
        if self.error is not None:
            return (
                "<div class='autograder-check error'>"
                f"{esc(w['could_not'].format(name=self.name, error=self.error))}</div>"
            )
        color = "#1a7f37" if self.points == self.max_points else "#b35900"
        head = w["checked"].format(
            name=self.name, points=_num(self.points), max=_num(self.max_points)
        )
        parts = [
            f"<div class='autograder-check' data-points='{_num(self.points)}' "
            f"data-max='{_num(self.max_points)}'>",
            f"<p style='color:{color};font-weight:bold'>{esc(head)}</p>",
        ]
        if not self.failures:
            parts.append(f"<p>{esc(w['passed'])}</p>")
        else:
            parts.append(f"<p><b>{esc(w['failing'])}</b></p><ul>")
            for index, failure in enumerate(self.failures):
                parts.append(f"<li class='failure'>{esc(failure)}")
                ladder = self._ladder(index)
                hint = self.hints[index] if index < len(self.hints) else {}
                for step, (label, value) in enumerate(ladder[: min(hints_shown, self.hint_steps)]):
                    if step == 1 and hint.get("section"):
                        link = f"<a href='#{esc(hint['section']['anchor'], quote=True)}'>"
                        value_html = f"{link}{esc(value)}</a>"
                    else:
                        value_html = esc(value)
                    parts.append(
                        f"<div class='hint hint-{step + 1}' style='margin:.3em 0 .3em 1em'>"
                        f"<i>{esc(label)}{esc(w['colon'].strip())}</i> {value_html}</div>"
                    )
                parts.append("</li>")
            parts.append("</ul>")
            if self.hint_steps:
                more = w["hint_more"] if hints_shown < self.hint_steps else w["hint_none"]
                parts.append(f"<p style='color:#555'>{esc(more)}</p>")
        for note in self.notes:
            parts.append(f"<p style='color:#555'>{esc(w['note'] + w['colon'])}{esc(note)}</p>")
        if self.cells:
            ran = w["ran"].format(
                ran=self.ran, cells=self.cells, name=self.name, seconds=self.seconds
            )
            parts.append(f"<p style='color:#777;font-size:90%'>{esc(ran)}</p>")
        parts.append("</div>")
        return "".join(parts)
