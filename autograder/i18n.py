"""Editions of the course in other languages: one source of truth, a catalog per chapter.

Code cells exist once, in ``course/source/``. The text of another edition lives beside them, in
``course/translations/<lang>/NN-name.yml``, one entry per cell, keyed by the cell's id:

- a markdown cell's entry holds its whole translated text (``text``);
- a code cell's entry holds a list of replacements (``replace``): each an exact piece of the
  English cell's source (a docstring, a test's message, a figure label, a comment) and its
  translation. The code around them is untouched, so the edition runs the same code and its
  hidden tests make the same checks, with messages in the edition's language. An empty list
  says the cell was read and has nothing to translate.

Every entry records ``en``, a hash of the English cell it translates (:func:`text_hash`). When the
English cell changes the hash no longer matches: the translation is *stale* until someone revisits
it and stamps it again (``python -m autograder translate stamp``). :func:`problems` lists what
keeps a catalog from being complete and current; the tests fail on any of it, and
:func:`translate_notebook` refuses to build an edition from a catalog that has any.

Example:
    >>> nb = {"cells": [
    ...     {"id": "a", "cell_type": "markdown", "metadata": {}, "source": "## Tensors"},
    ...     {"id": "b", "cell_type": "code", "metadata": {}, "source": 'print("Checks passed.")'},
    ... ]}
    >>> catalog = Catalog("zh", {
    ...     "a": {"en": text_hash("## Tensors"), "text": "## 张量"},
    ...     "b": {"en": text_hash('print("Checks passed.")'),
    ...           "replace": [{"en": "Checks passed.", "zh": "检查通过。"}]},
    ... })
    >>> [cell["source"] for cell in translate_notebook(nb, catalog)["cells"]]
    ['## 张量', 'print("检查通过。")']
"""

from __future__ import annotations

import ast
import copy
import hashlib
import io
import re
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "LANGUAGES",
    "Catalog",
    "Problem",
    "TranslationError",
    "catalog_path",
    "dump_catalog",
    "load_catalog",
    "translate_feedback",
    "notebook_language",
    "problems",
    "skeleton",
    "stamp",
    "text_hash",
    "translate_notebook",
    "untranslated_prose",
]

# The editions: code -> name. English is the source; the others are built from their catalogs.
LANGUAGES = {"en": "English", "zh": "中文"}
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# An English word of prose: three letters or more, not part of a name (snake_case, dotted, called).
_WORD = re.compile(r"(?<![\w.`])[A-Za-z]{3,}(?![\w(`])")
# Calls whose string arguments a reader sees: messages, printouts, figure labels and titles.
_SHOWN_CALLS = {
    "print", "display", "Markdown", "expect", "close", "warn",
    "AssertionError", "ValueError", "TypeError", "RuntimeError", "KeyError", "IndexError",
    "NotImplementedError", "FileNotFoundError",
}  # fmt: skip
_LABEL_CALLS = {
    "set_title", "set_xlabel", "set_ylabel", "suptitle", "title", "xlabel", "ylabel", "text",
    "annotate", "legend", "barh", "bar", "plot", "scatter", "hist", "axhline", "axvline", "step",
}  # fmt: skip
_LABEL_KEYWORDS = {"label", "title", "xlabel", "ylabel", "desc"}
# A replacement must keep an f-string's fields (and a format string's) exactly.
_FIELD = re.compile(r"\{[^{}]*\}")


class TranslationError(ValueError):
    """A catalog is malformed, incomplete or stale; the message lists what and where."""


@dataclass
class Problem:
    """One thing that keeps a catalog from being complete and current.

    Attributes:
        cell: the cell id (or "" for the catalog as a whole).
        kind: ``missing``, ``stale``, ``not-found``, ``untranslated``, ``broken``, ``unknown`` or
            ``malformed``.
        detail: what exactly, for the translator.
    """

    cell: str
    kind: str
    detail: str

    def __str__(self) -> str:
        where = f"cell {self.cell}: " if self.cell else ""
        return f"{where}{self.kind}: {self.detail}"


@dataclass
class Catalog:
    """The translations of one chapter into one language.

    Attributes:
        language: the edition's code, e.g. ``"zh"``.
        cells: cell id -> entry (``{"en": hash, "text": str}`` for markdown,
            ``{"en": hash, "replace": [{"en": str, "zh": str}, ...]}`` for code).
        path: the file it was read from, if any.
    """

    language: str
    cells: dict = field(default_factory=dict)
    path: Path | None = None


def text_hash(text: str) -> str:
    """The stamp of an English cell: 12 hex digits of the SHA-256 of its source.

    Example:
        >>> text_hash("## Tensors")
        '3a6c1210eb85'
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def catalog_path(course_root: Path, chapter_name: str, language: str) -> Path:
    """``<course>/translations/<language>/<chapter>.yml``."""
    return Path(course_root) / "translations" / language / f"{chapter_name}.yml"


def notebook_language(nb: dict) -> str:
    """The edition a released notebook belongs to (``metadata.autograder.language``; "en" if none).

    Example:
        >>> notebook_language({"metadata": {"autograder": {"language": "zh"}}})
        'zh'
        >>> notebook_language({"metadata": {}})
        'en'
    """
    meta = nb.get("metadata", {}) if isinstance(nb, dict) else {}
    auto = meta.get("autograder", {}) if isinstance(meta, dict) else {}
    language = auto.get("language") if isinstance(auto, dict) else None
    return language if isinstance(language, str) and language in LANGUAGES else "en"


def load_catalog(path: Path, language: str | None = None) -> Catalog:
    """Read a catalog file.

    Raises:
        TranslationError: if the file is missing, not YAML, or its entries break the format.
    """
    import yaml

    path = Path(path)
    language = language or path.parent.name
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TranslationError(
            f"no {LANGUAGES.get(language, language)} catalog at {path}: create one with "
            f"`python -m autograder translate skeleton --lang {language} --chapter "
            f"{path.stem[:2]}`"
        ) from None
    except yaml.YAMLError as exc:
        raise TranslationError(f"{path}: not valid YAML ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise TranslationError(f"{path}: expected a mapping with a list under 'cells'")
    cells = {}
    for number, entry in enumerate(data["cells"], start=1):
        where = f"{path}: entry {number}"
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            raise TranslationError(f"{where}: each entry needs an 'id' (the cell's id)")
        where += f" (cell {entry['id']})"
        if entry["id"] in cells:
            raise TranslationError(f"{where}: the cell id appears twice")
        if not isinstance(entry.get("en"), str):
            raise TranslationError(f"{where}: 'en' (the English cell's hash) is missing")
        if ("text" in entry) == ("replace" in entry):
            raise TranslationError(f"{where}: give exactly one of 'text' (markdown) or 'replace'")
        if "text" in entry and not isinstance(entry["text"], str):
            raise TranslationError(f"{where}: 'text' must be a string")
        if "replace" in entry:
            pairs = entry["replace"] or []
            if not isinstance(pairs, list) or not all(
                isinstance(p, dict)
                and isinstance(p.get("en"), str)
                and isinstance(p.get(language), str)
                for p in pairs
            ):
                raise TranslationError(
                    f"{where}: 'replace' must be a list of {{en: ..., {language}: ...}} pairs of strings"
                )
            entry = {**entry, "replace": pairs}
        cells[entry["id"]] = entry
    return Catalog(language, cells, path)


def problems(nb: dict, catalog: Catalog) -> list[Problem]:
    """Everything that keeps ``catalog`` from translating the English notebook ``nb`` completely.

    A cell with no entry is ``missing``; an entry whose hash is not the English cell's is
    ``stale``; a replacement whose English piece is not in the cell is ``not-found``; one that
    changes an f-string's fields, or leaves the cell invalid Python, is ``broken``; a markdown
    translation without the language's script, a replacement left equal to the English, or prose
    a reader sees (a docstring, a message, a label) still in English after translation is
    ``untranslated``; an entry for no cell is ``unknown``.
    """
    found, ids = [], set()
    for cell in nb["cells"]:
        cid, source = cell.get("id", ""), _source(cell)
        ids.add(cid)
        entry = catalog.cells.get(cid)
        if entry is None:
            found.append(
                Problem(cid, "missing", f"no translation of this {cell['cell_type']} cell")
            )
            continue
        if entry["en"] != text_hash(source):
            found.append(Problem(cid, "stale", "the English cell changed since it was translated"))
        if cell["cell_type"] == "code":
            if "replace" not in entry:
                found.append(Problem(cid, "malformed", "a code cell takes 'replace', not 'text'"))
                continue
            left = set()
            for pair in entry["replace"]:
                theirs = pair[catalog.language]
                if pair["en"] not in source:
                    found.append(
                        Problem(cid, "not-found", f"not in the English cell: {pair['en']!r:.80}")
                    )
                elif theirs == pair["en"] and _WORD.search(pair["en"]):
                    found.append(
                        Problem(cid, "untranslated", f"left in English: {pair['en']!r:.80}")
                    )
                    left.add(pair["en"])
                elif sorted(_FIELD.findall(theirs)) != sorted(_FIELD.findall(pair["en"])):
                    found.append(Problem(
                        cid, "broken", f"the {{...}} fields differ from the English: {theirs!r:.80}"
                    ))  # fmt: skip
            translated = _apply(source, entry["replace"], catalog.language)
            if _parses(source) and not _parses(translated):
                found.append(
                    Problem(cid, "broken", "the translated cell is no longer valid Python")
                )
            for text in untranslated_prose(translated):
                if not any(text in piece for piece in left):
                    found.append(Problem(cid, "untranslated", f"still in English: {text!r:.80}"))
        else:
            if "text" not in entry:
                found.append(
                    Problem(cid, "malformed", "a markdown cell takes 'text', not 'replace'")
                )
            elif not _CJK.search(entry["text"]) and _WORD.search(source):
                found.append(Problem(cid, "untranslated", "the text has no Chinese in it"))
    for cid in catalog.cells:
        if cid not in ids:
            found.append(Problem(cid, "unknown", "no cell with this id in the English notebook"))
    return found


def translate_notebook(nb: dict, catalog: Catalog, *, strict: bool = True) -> dict:
    """The notebook of the catalog's edition: the same cells with their text translated.

    Args:
        nb: the English notebook (plain JSON data, or an nbformat node).
        catalog: its translations.
        strict: raise when the catalog has any :func:`problems`; otherwise translate what can be
            and keep the English for the rest.

    Raises:
        TranslationError: in strict mode, listing the problems.
    """
    if strict:
        found = problems(nb, catalog)
        if found:
            where = catalog.path or f"the {catalog.language} catalog"
            listed = "\n  ".join(str(p) for p in found[:20])
            more = f"\n  ... and {len(found) - 20} more" if len(found) > 20 else ""
            raise TranslationError(
                f"{where} is not complete and current ({len(found)} problems; see `python -m "
                f"autograder translate status --lang {catalog.language}`):\n  {listed}{more}"
            )
    out = copy.deepcopy(nb)
    for cell in out["cells"]:
        entry = catalog.cells.get(cell.get("id", ""))
        if entry is None:
            continue
        source = _source(cell)
        if "text" in entry and cell["cell_type"] != "code":
            cell["source"] = (
                entry["text"].rstrip("\n") if not source.endswith("\n") else entry["text"]
            )
        elif "replace" in entry and cell["cell_type"] == "code":
            cell["source"] = _apply(source, entry["replace"], catalog.language)
    return out


def untranslated_prose(source: str) -> list[str]:
    """Prose a reader sees that is still English in a code cell's source.

    Looks at docstrings (not private helpers'), the messages of ``assert``/``raise``/``expect``/``close``, printouts, and
    figure labels and titles (one English word is enough there; elsewhere three).

    Example:
        >>> untranslated_prose('ax.set_title("loss per epoch")\\nprint(f"{n} steps")')
        ['loss per epoch']
    """
    try:
        tree = ast.parse(_without_magics(source))
    except SyntaxError:
        return []
    left, seen = [], set()
    for node, min_words in _shown_strings(tree):
        if id(node) in seen:  # raise ValueError("..."): a raise and a call, one message
            continue
        seen.add(id(node))
        text = _static_text(node)
        if text and not _CJK.search(text) and len(_WORD.findall(text)) >= min_words:
            left.append(text)
    return left


def skeleton(nb: dict, catalog: Catalog | None, language: str) -> Catalog:
    """A catalog to translate from: the existing entries, plus one for each cell that has none.

    A new markdown entry holds the English text; a new code entry proposes every shown string and
    comment (see :func:`untranslated_prose`) with the English as its translation. Until a
    translator replaces them they count as ``untranslated``; proposals not worth translating may
    be deleted.
    """
    cells = dict(catalog.cells) if catalog else {}
    ordered = {}
    for cell in nb["cells"]:
        cid, source = cell.get("id", ""), _source(cell)
        if cid in cells:
            ordered[cid] = cells.pop(cid)
        elif cell["cell_type"] == "code":
            ordered[cid] = {"id": cid, "en": text_hash(source), "replace": [
                {"en": piece, language: piece} for piece in _proposals(source)
            ]}  # fmt: skip
        else:
            ordered[cid] = {"id": cid, "en": text_hash(source), "text": source}
    ordered.update(cells)  # entries for cells that are gone stay, reported as unknown
    return Catalog(language, ordered, catalog.path if catalog else None)


def stamp(nb: dict, catalog: Catalog, ids: list[str] | None = None) -> list[str]:
    """Record that the translations of ``ids`` (default: every stale cell) were revisited.

    Returns:
        The ids stamped.

    Raises:
        TranslationError: for an id that has no entry or no cell.
    """
    by_id = {cell.get("id", ""): _source(cell) for cell in nb["cells"]}
    if ids is None:
        ids = [
            cid
            for cid, e in catalog.cells.items()
            if cid in by_id and e["en"] != text_hash(by_id[cid])
        ]
    for cid in ids:
        if cid not in by_id or cid not in catalog.cells:
            raise TranslationError(f"cell {cid!r}: no such cell in the notebook or in the catalog")
        catalog.cells[cid]["en"] = text_hash(by_id[cid])
    return list(ids)


def dump_catalog(catalog: Catalog, chapter_name: str) -> str:
    """The YAML text of a catalog: block scalars for multi-line text, unicode kept as is."""
    import yaml

    class _Dumper(yaml.SafeDumper):
        pass

    def _str(dumper, value):
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    _Dumper.add_representer(str, _str)
    header = (
        f"# {LANGUAGES[catalog.language]} edition of chapter {chapter_name}: see autograder/i18n.py.\n"
        "# One entry per cell, by id. 'en' is the hash of the English cell this translates; when it\n"
        "# no longer matches, revisit the translation and run `python -m autograder translate stamp`.\n"
    )
    entries = [
        {"id": cid, **{k: v for k, v in e.items() if k != "id"}} for cid, e in catalog.cells.items()
    ]
    body = yaml.dump(
        {"chapter": chapter_name, "language": catalog.language, "cells": entries},
        Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=100,
    )  # fmt: skip
    return header + body


# The grader's own words in a learner's feedback (the chapters' messages come translated from
# their catalogs): English pattern -> translation, applied to each " | "-separated part. Patterns
# match the texts autograder.grader.grade/judge/execute, autograder.checks and the kernel's
# harness write; tests/autograder/test_i18n.py grades each case in Chinese.
_GRADER_WORDS = {
    "zh": [
        (r"^passed$", "通过"),
        (r"^not run$", "未运行"),
        (
            r"not implemented yet \(the stub still raises it\)",
            "尚未实现（桩函数仍在抛出它）",
        ),
        (
            r"^your solution cell for (\S+) is missing \(deleted\?\): copy it back from a fresh "
            r"copy of the released notebook and fill it in$",
            r"找不到 \1 的答案单元格（被删除了？）：从一份新发布的笔记本中把它复制回来再填写",
        ),
        (r"^(\w+) in your solution cell: ", r"你的答案单元格出错（\1）："),
        (
            r"the cell ran for more than (\S+) s and was stopped: is there an infinite loop, or a "
            r"loop over far more data than needed\?",
            r"单元格运行超过 \1 秒，已被停止：是否有死循环，或者循环处理了远超所需的数据？",
        ),
        (r"stopped after (\S+) s", r"运行 \1 秒后被停止"),
        (
            r"the Python kernel died( \(exit code -?\d+\))?: does the code call os\._exit\(\), or "
            r"crash the interpreter \(a segfault, running out of memory\)\?",
            r"Python 内核崩溃了\1：代码是否调用了 os._exit()，或让解释器崩溃（段错误、内存耗尽）？",
        ),
        (
            r"not run: the kernel died or hung (\d+) times \(last while running (.+)\); fix that "
            r"cell and grade again",
            r"未运行：内核已崩溃或卡住 \1 次（最后一次在运行 \2 时）；修好那个单元格后重新评分",
        ),
        (
            r"the cell printed more than (\d+) MB and was stopped: print a summary, not every "
            r"value inside a loop",
            r"单元格输出超过 \1 MB，已被停止：请打印摘要，不要在循环里打印每个值",
        ),
        (r"the hidden tests could not be prepared \((.*)\)$", r"隐藏测试无法准备（\1）"),
        (r"the hidden tests' results were altered", "隐藏测试的结果被篡改了"),
        (r"the tests' results could not be read \((.*)\)$", r"无法读取测试结果（\1）"),
        (r"the tests' results were not written by the grader", "测试结果不是评分器写入的"),
        (
            r"your result could not be compared with the reference \((.*)\)$",
            r"你的结果无法与参考实现比较（\1）",
        ),
        (
            r"(\S+) is the reference implementation: the exercise must be implemented in your own "
            r"code, not delegated to the companion",
            r"\1 是参考实现：练习必须用你自己的代码完成，不能交给 companion",
        ),
        (
            r"(.+?) is blocked while grading: the companion is the reference implementation, and "
            r"the exercise must be implemented in your own code, not delegated to the companion",
            r"评分时不能使用 \1：companion 是参考实现，练习必须用你自己的代码完成，不能交给 companion",
        ),
        (
            r"the code replaced the code of (\S+) while the hidden tests ran: results obtained "
            r"with a changed library do not count",
            r"隐藏测试运行期间，代码替换了 \1 的代码：用被改动过的库得到的结果不算数",
        ),
        (
            r"the code copied the companion's data (\(.+?\)) while the hidden tests ran: results "
            r"obtained with a changed library do not count",
            r"隐藏测试运行期间，代码复制了 companion 的数据 \1：用被改动过的库得到的结果不算数",
        ),
        (
            r"the code (added|replaced|removed) (\S+) while the hidden tests ran: results obtained "
            r"with a changed library do not count",
            lambda m: (
                f"隐藏测试运行期间，代码{_ZH_VERBS[m[1]]} {m[2]}：用被改动过的库得到的结果不算数"
            ),
        ),
        # autograder.checks.close's details, at the end of a message
        (
            r" \(got (.+) where (.+) was expected: return a Python number \(use \.item\(\)\)\)$",
            lambda m: (
                f"（得到{_zh_kind(m[1])}，应为{_zh_kind(m[2])}：请返回 Python 数值（用 .item()））"
            ),
        ),
        (
            r" \(got (.+) where (.+) was expected\)$",
            lambda m: f"（得到{_zh_kind(m[1])}，应为{_zh_kind(m[2])}）",
        ),
        (r" \(got (.+), expected (.+)\)$", r"（得到 \1，期望 \2）"),
        (r" \(shape (.+), expected (.+)\)$", r"（形状 \1，期望 \2）"),
        (r" \(dtype (.+), expected (.+)\)$", r"（dtype 为 \1，期望 \2）"),
        (r" \(length (.+), expected (.+)\)$", r"（长度 \1，期望 \2）"),
        (r" \(keys(.*) must be plain str or int\)$", r"（\1 的键必须是普通的 str 或 int）"),
        (r" \(missing keys (.+); unexpected keys (.+)\)$", r"（缺少键 \1；多出键 \2）"),
        (r" \(missing keys (.+)\)$", r"（缺少键 \1）"),
        (r" \(unexpected keys (.+)\)$", r"（多出键 \1）"),
        (r" \(at (.+)\)$", r"（位置 \1）"),
        (r"\[hidden\]", "[已隐藏]"),
    ]
}
_COMPILED_WORDS: dict = {}
_ZH_VERBS = {"added": "增加了", "replaced": "替换了", "removed": "删除了"}
# What is left English after the table: an error the learner's own code (or a library it called)
# raised, whose message Python and torch write in English; the line then says so in Chinese.
_RAISED = re.compile(r"^(\w+)(: |$)(?!.*[\u4e00-\u9fff])")


def _zh_kind(described: str) -> str:
    """:func:`autograder.checks._describe`'s words for a value's kind, in Chinese.

    Example:
        >>> _zh_kind("a tensor of shape (2, 3)['loss']")
        "形状为 (2, 3) 的张量['loss']"
    """
    for pattern, replacement in (
        (r"^a 0-d tensor", "一个 0 维张量"),
        (r"^a tensor of shape (\([\d, ]*\))", r"形状为 \1 的张量"),
        (r"^an object of type (\S+)", r"\1 类型的对象"),
        (r"^a NumPy (\w+)", r"NumPy 的 \1"),
        (r"^a (\w+)", r"一个 \1"),
    ):
        described, n = re.subn(pattern, replacement, described)
        if n:
            break
    return described


def translate_feedback(text: str, language: str) -> str:
    """The grader's own words in a feedback line, in the learner's language.

    A chapter's own messages are already in the edition's language (its hidden tests come from
    the catalog); this translates what the grader adds: "passed", the stub's NotImplementedError,
    timeouts and crashes, the companion being switched off, and :func:`autograder.checks.close`'s
    "(got ..., expected ...)" details. English, and anything unknown, stay as they are.

    Example:
        >>> translate_feedback("AssertionError: 损失不对 (got 1.0, expected 2.0)", "zh")
        'AssertionError: 损失不对（得到 1.0，期望 2.0）'
        >>> translate_feedback("AttributeError: 'NoneType' object has no attribute 'split'", "zh")
        "你的代码抛出了 AttributeError：'NoneType' object has no attribute 'split'"
        >>> translate_feedback("passed", "en")
        'passed'
    """
    if language == "en" or language not in _GRADER_WORDS:
        return text
    if language not in _COMPILED_WORDS:
        _COMPILED_WORDS[language] = [(re.compile(p), r) for p, r in _GRADER_WORDS[language]]
    parts = []
    for part in text.split(" | "):
        for pattern, replacement in _COMPILED_WORDS[language]:
            part = pattern.sub(replacement, part)
        if language == "zh" and not re.search(r"[\u4e00-\u9fff]", part):
            raised = _RAISED.match(part)
            if raised and raised[1][0].isupper():
                rest = part[raised.end() :]
                part = f"你的代码抛出了 {raised[1]}" + (f"：{rest}" if rest else "")
        parts.append(part)
    return " | ".join(parts)


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _apply(source: str, pairs: list[dict], language: str) -> str:
    # Longest first, so a piece inside another piece does not break the longer replacement.
    for pair in sorted(pairs, key=lambda p: -len(p["en"])):
        source = source.replace(pair["en"], pair[language])
    return source


def _parses(source: str) -> bool:
    try:
        ast.parse(_without_magics(source))
    except SyntaxError:
        return False
    return True


def _without_magics(source: str) -> str:
    return "\n".join(
        "" if line.lstrip().startswith(("%", "!")) else line for line in source.split("\n")
    )


def _static_text(node) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return " ".join(_static_text(v) for v in node.values if isinstance(v, ast.Constant))
    if isinstance(node, ast.BinOp):  # "..." + "..." or "..." % args
        return " ".join(filter(None, (_static_text(node.left), _static_text(node.right))))
    return ""


def _call_name(func) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _shown_strings(tree):
    """(string node, words needed) for each string a reader of the notebook sees."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if getattr(node, "name", "").startswith("_"):
                continue  # a private helper's docstring (the hidden tests'): no learner reads it
            doc = node.body[0] if node.body else None
            if isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant):
                yield doc.value, 3
        elif isinstance(node, ast.Assert) and node.msg is not None:
            yield node.msg, 3
        elif isinstance(node, ast.Call):
            name = _call_name(node.func)
            if name in _SHOWN_CALLS or name in _LABEL_CALLS:
                words = 1 if name in _LABEL_CALLS else 3
                for arg in node.args:
                    yield arg, words
            for keyword in node.keywords:
                if keyword.arg in _LABEL_KEYWORDS:
                    yield keyword.value, 1
                elif name in _SHOWN_CALLS and keyword.arg in {"msg", "message"}:
                    yield keyword.value, 3
        elif isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            for arg in node.exc.args:
                yield arg, 3


def _proposals(source: str) -> list[str]:
    """Pieces of a code cell a translator is likely to translate: shown strings and comments."""
    pieces = []
    try:
        tree = ast.parse(_without_magics(source))
    except SyntaxError:
        tree = None
    if tree is not None:
        lines = source.split("\n")
        for node, _ in _shown_strings(tree):
            if _static_text(node) and _WORD.search(_static_text(node)) and node.end_lineno:
                segment = ast.get_source_segment(source, node) if node.lineno else None
                if segment and segment not in pieces:
                    pieces.append(segment)
        del lines
    hidden = False
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type != tokenize.COMMENT:
                continue
            if "BEGIN HIDDEN TESTS" in tok.string:
                hidden = True
            elif "END HIDDEN TESTS" in tok.string:
                hidden = False
            elif not hidden and len(_WORD.findall(tok.string)) >= 3 and "###" not in tok.string:
                if tok.string not in pieces:
                    pieces.append(tok.string)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return pieces
