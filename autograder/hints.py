"""The hint ladder of ``autograder check``: from a failing check to the contract and the chapter.

A learner whose exercise fails a hidden check first sees the check's feedback (what failed, on
which input). Stuck, they ask for more, one step at a time:

1. the **clause** of the exercise's contract (its docstring, in the learner's edition) that the
   behaviour breaks;
2. the **section** of the chapter that teaches it: its heading, with a link.

Both are read from the learner's own notebook (what they can read anyway): never reference code,
never hidden-test source. The clause is the docstring sentence or bullet that shares the most
telling words with the feedback (words weighted by how rare they are in the docstring; Chinese
text by pairs of characters); the section is the one before the exercise whose text shares the
most with the clause and the feedback.
"""

from __future__ import annotations

import ast
import math
import re
from collections import Counter
from dataclasses import dataclass

__all__ = ["Section", "anchor", "best_clause", "best_section", "clauses", "docstring", "sections"]

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*|[\u4e00-\u9fff]+|\d+")
_CJK = re.compile(r"[\u4e00-\u9fff]")
_STOP = set(
    """the and for that with this from are was were not but its it's into onto than then when
    what which who whom whose how why where there their they them these those has have had
    had does did doing done can could should would will shall may might must each every any
    all some one two own same other such only also just more most less very your you yours
    our out over under about after before again once here off per via being been get got
    let use used uses using make made makes a an of to in on at by as is be or if so no do
    x y self""".split()
)
_HEADING = re.compile(r"^(#{1,3})\s+(.+?)\s*#*\s*$", re.M)
_BULLET = re.compile(r"^\s*(?:[-*]|\d+\.)\s+")
_SECTION = re.compile(
    r"(Args|Arguments|Returns|Raises|Yields|Examples?|Attributes|参数|返回|异常|示例)[:：]"
)
_ARGS = re.compile(r"(Args|Arguments|Attributes|参数)[:：]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(\[\u4e00-\u9fff])|(?<=[。！？])")
_EXERCISE = re.compile(r"^(Exercise|练习)\b")


def _tokens(text: str) -> list[str]:
    """Words that can tell two sentences apart: English words (no stop words), identifiers, and
    for Chinese every pair of neighbouring characters."""
    found = []
    for match in _WORD.finditer(text.replace("``", "").replace("`", "")):
        word = match.group(0)
        if _CJK.match(word):
            found += [word[i : i + 2] for i in range(max(1, len(word) - 1))]
            continue
        word = word.lower().strip(".")
        if len(word) < 3 or word in _STOP or word.isdigit():
            continue
        found.append(word[:-1] if word.endswith("s") and len(word) > 4 else word)
    return found


def docstring(code: str) -> str:
    """The docstring of the first function or class that a solution cell defines ("" if none).

    Example:
        >>> docstring("def f(x):\\n    '''Return x.\\n\\n    Twice.'''\\n    raise NotImplementedError")
        'Return x.\\n\\nTwice.'
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        match = re.search(r"(\"\"\"|''')(.*?)\1", code, re.S)
        return match.group(2).strip() if match else ""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return ast.get_docstring(node) or ""
    return ""


def clauses(text: str) -> list[str]:
    """A docstring cut into clauses: each bullet, each ``Args`` entry, and each sentence of the
    other paragraphs, joined back onto one line.

    Example:
        >>> clauses("Do A. Then B.\\n\\n- keeps C\\n  and D\\n\\nArgs:\\n    x: the input.\\n      More.")
        ['Do A.', 'Then B.', 'keeps C and D', 'x: the input. More.']
    """
    blocks: list[tuple[str, list[str]]] = []
    current: list[str] | None = None
    entry_indent = None  # inside an Args section: the indentation of its entries
    for line in text.splitlines():
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if not stripped:
            current = None
            continue
        if _SECTION.fullmatch(stripped):
            current, entry_indent = None, (-1 if _ARGS.fullmatch(stripped) else None)
            continue
        if entry_indent == -1:
            entry_indent = indent
        if _BULLET.match(line) or (entry_indent is not None and indent <= entry_indent):
            current = [_BULLET.sub("", line).strip()]
            blocks.append(("item", current))
        elif current is None:
            current = [stripped]
            blocks.append(("paragraph", current))
        else:
            current.append(stripped)
    found: list[str] = []
    for kind, lines in blocks:
        joined = " ".join(" ".join(lines).split())
        joined = re.sub(r"(?<=[\u4e00-\u9fff，。；：、）]) (?=[\u4e00-\u9fff（])", "", joined)
        if kind == "item":
            found.append(joined)
        else:
            found += [p.strip() for p in _SENTENCE_END.split(joined) if p.strip()]
    return found


def best_clause(feedback: str, candidates: list[str]) -> str | None:
    """The clause that shares the most telling words with the feedback (None when none shares
    any). A word counts more the fewer clauses hold it.

    Example:
        >>> best_clause("the model was left in eval mode", ["Returns a float.", "The model leaves in the mode it arrived in."])
        'The model leaves in the mode it arrived in.'
    """
    wanted = Counter(_tokens(feedback))
    if not wanted or not candidates:
        return None
    bags = [set(_tokens(c)) for c in candidates]
    weight = {w: math.log((1 + len(bags)) / (1 + sum(w in b for b in bags))) + 1 for w in wanted}
    scores = [sum(weight[w] for w in wanted if w in bag) for bag in bags]
    best = max(range(len(candidates)), key=lambda i: (scores[i], -i))
    return candidates[best] if scores[best] > 0 else None


@dataclass(frozen=True)
class Section:
    """A heading of the chapter and the text under it (up to the next heading of its level)."""

    title: str
    anchor: str
    text: str
    cell: int


def anchor(title: str) -> str:
    """The id JupyterLab gives a rendered Markdown heading: its text, spaces as dashes.

    Example:
        >>> anchor("2 · Train and evaluate: `train_one_epoch`")
        '2-·-Train-and-evaluate:-train_one_epoch'
    """
    text = re.sub(r"`([^`]*)`", r"\1", title)
    text = re.sub(r"\*\*?([^*]+)\*\*?", r"\1", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return "-".join(text.split())


def sections(notebook: dict, before: int | None = None) -> list[Section]:
    """The chapter's ``##`` sections (and ``###`` ones inside them) up to cell ``before``; the
    exercises' own headings are not sections that teach."""
    found: list[Section] = []
    for index, cell in enumerate(notebook.get("cells", [])):
        if before is not None and index >= before:
            break
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        if cell.get("cell_type") != "markdown":
            continue
        for match in _HEADING.finditer(source):
            if len(match.group(1)) >= 2 and not _EXERCISE.match(match.group(2).strip()):
                title = match.group(2).strip()
                found.append(Section(title, anchor(title), "", index))
        if found:
            last = found[-1]
            found[-1] = Section(last.title, last.anchor, last.text + "\n" + source, last.cell)
    return found


def best_section(query: str, candidates: list[Section]) -> Section | None:
    """The section whose heading and prose share the most telling words with ``query``."""
    if not candidates:
        return None
    wanted = Counter(_tokens(query))
    bags = [Counter(_tokens(s.title + " " + s.title + " " + s.text)) for s in candidates]
    weight = {w: math.log((1 + len(bags)) / (1 + sum(w in b for b in bags))) + 1 for w in wanted}
    scores = [
        sum(weight[w] * min(3, bag[w]) for w in wanted if w in bag) / math.sqrt(1 + len(bag))
        for bag in bags
    ]
    best = max(range(len(candidates)), key=lambda i: (scores[i], i))
    return candidates[best] if scores[best] > 0 else None
