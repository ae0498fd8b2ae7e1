"""Copying, seen: how alike two pieces of exercise code are in structure, not in text.

Each piece of code is parsed with :mod:`ast` (never run) and normalised so that what a copier
changes cheaply does not count:

- names: every identifier the code binds or reads becomes ``_`` (variables, arguments,
  functions, classes), except builtins and the names of imported modules (``torch``, ``nn``);
  attributes (``.zero_grad``, ``nn.Conv2d``) and constants stay, they are the substance;
- comments and formatting vanish with the parse; docstrings are dropped;
- order: the statements of every block are sorted by their own normalised form, so reordering
  (independent) statements changes nothing.

The normalised tree is flattened to tokens (node types, kept names, constants); its fingerprints
are the hashes of every run of :data:`K` consecutive tokens (Python's own ``hash``, so they
mean something only within one process), winnowed as MOSS does (the smallest
hash of every window of :data:`WINDOW` k-grams). Two pieces score the Jaccard index of their
fingerprint sets: 1.0 for the same structure, near 0 for unrelated code. Code shorter than
:data:`MIN_TOKENS` tokens is not compared: a one-line answer has too few ways to be written for a
match to mean anything. A match is a reason for a person to look, never a deduction.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import importlib.util
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

__all__ = [
    "K",
    "MIN_TOKENS",
    "THRESHOLD",
    "WINDOW",
    "Fingerprint",
    "companion_sources",
    "fingerprint",
    "similar_pairs",
    "similarity",
]

K = 6
WINDOW = 4
MIN_TOKENS = 80
THRESHOLD = 0.9
_BUILTINS = frozenset(dir(builtins))


@dataclass(frozen=True)
class Fingerprint:
    """The normalised form of one piece of code: its winnowed k-gram hashes and size."""

    hashes: frozenset[int]
    tokens: int

    @property
    def comparable(self) -> bool:
        """False for code too short for a match to mean anything (< :data:`MIN_TOKENS`)."""
        return self.tokens >= MIN_TOKENS


_BLOCKS = ("body", "orelse", "finalbody", "handlers")
_SKIP = ("ctx", "type_comment", "kind", "lineno", "col_offset", "end_lineno", "end_col_offset")


def _docstring(statement: ast.AST) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def _modules(tree: ast.AST) -> set[str]:
    """Names bound by imports (``torch``, ``nn``, ``F``), plus the course's usual ones."""
    names = {"torch", "nn", "F", "np", "companion", "math", "random", "os"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def _tokens(node: ast.AST, keep: set[str]) -> list[str]:
    """The node's tokens, names erased, docstrings dropped, each block's statements sorted."""
    out = [type(node).__name__]
    for name, value in ast.iter_fields(node):
        if name in _SKIP or value is None:
            continue
        if name in ("id", "arg", "name") and isinstance(value, str):
            out.append(value if value in keep and name == "id" else "_")
        elif name == "names" and isinstance(node, ast.Global | ast.Nonlocal):
            out.append("_")
        elif name in ("annotation", "returns"):
            continue
        elif isinstance(value, ast.AST):
            out += _tokens(value, keep)
        elif isinstance(value, list):
            items = [v for v in value if not (name in _BLOCKS and _docstring(v))]
            parts = [_tokens(v, keep) if isinstance(v, ast.AST) else [repr(v)] for v in items]
            if name in _BLOCKS:
                parts.sort()
            out.append(f"[{name}")
            for part in parts:
                out += part
            out.append("]")
        else:
            out.append(repr(value)[:40])
    return out


def normalised_tokens(code: str) -> list[str] | None:
    """The code's tokens after normalising names, docstrings and statement order (None when it
    does not parse)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    return _tokens(tree, _BUILTINS | _modules(tree))[1:]  # without the Module node


def _stable_hash(gram: list[str]) -> int:
    """A k-gram's hash, the same in every process (Python's ``hash`` of a string is salted per
    process, which made the winnowing choose other hashes, and the scores move, from run to run)."""
    digest = hashlib.blake2b("\x00".join(gram).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big")


@lru_cache(maxsize=8192)  # a class hands in the same code many times
def fingerprint(code: str) -> Fingerprint | None:
    """The winnowed fingerprint of ``code`` (None when it does not parse).

    Example:
        >>> a = fingerprint("def f(x):\\n    return x + 1\\n")
        >>> b = fingerprint("def g(y):  # renamed\\n    return y + 1\\n")
        >>> a == b
        True
    """
    tokens = normalised_tokens(code)
    if tokens is None:
        return None
    grams = [_stable_hash(tokens[i : i + K]) for i in range(max(1, len(tokens) - K + 1))]
    if len(grams) <= WINDOW:
        chosen = set(grams)
    else:
        chosen = {min(grams[i : i + WINDOW]) for i in range(len(grams) - WINDOW + 1)}
    return Fingerprint(frozenset(chosen), len(tokens))


def similarity(a: Fingerprint | None, b: Fingerprint | None) -> float:
    """Jaccard index of two fingerprints' hashes (0.0 when either is missing or too short)."""
    if a is None or b is None or not a.comparable or not b.comparable:
        return 0.0
    union = len(a.hashes | b.hashes)
    return len(a.hashes & b.hashes) / union if union else 0.0


def similar_pairs(
    codes: dict[str, str], threshold: float = THRESHOLD
) -> list[tuple[str, str, float]]:
    """Every pair of ``codes`` (key -> code) scoring at least ``threshold``, best first.

    Codes with the same fingerprint are compared once (a class where many hand in the same code
    costs no more than one where few do).
    """
    groups: dict[Fingerprint, list[str]] = {}
    for key, code in codes.items():
        found = fingerprint(code)
        if found is not None and found.comparable:
            groups.setdefault(found, []).append(key)
    prints = list(groups)
    pairs = []
    for same in groups.values():
        pairs += [(a, b, 1.0) for i, a in enumerate(same) for b in same[i + 1 :]]
    for i, a in enumerate(prints):
        for b in prints[i + 1 :]:
            score = similarity(a, b)
            if score >= threshold:
                pairs += [(x, y, score) for x in groups[a] for y in groups[b]]
    order = {key: index for index, key in enumerate(codes)}
    pairs = [(a, b, s) if order[a] < order[b] else (b, a, s) for a, b, s in pairs]
    pairs.sort(key=lambda pair: (-pair[2], order[pair[0]], order[pair[1]]))
    return pairs


def _segment(lines: list[str], node: ast.AST) -> str:
    """A top-level definition's source (``ast.get_source_segment`` splits the file each time)."""
    return "\n".join(lines[node.lineno - 1 : node.end_lineno]) + "\n"


@cache
def companion_sources() -> dict[str, str]:
    """Every top-level function and class of the installed ``companion``, by qualified name,
    read from its files with :mod:`ast` (nothing is imported)."""
    spec = importlib.util.find_spec("companion")
    if spec is None or not spec.submodule_search_locations:
        return {}
    root = Path(next(iter(spec.submodule_search_locations)))
    found = {}
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        module = ".".join(("companion", *path.relative_to(root).with_suffix("").parts))
        module = module.removesuffix(".__init__")
        lines = text.splitlines()
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                found[f"{module}.{node.name}"] = _segment(lines, node)
    return found


@cache
def _companion_prints() -> dict[str, Fingerprint]:
    prints = {name: fingerprint(code) for name, code in companion_sources().items()}
    return {name: p for name, p in prints.items() if p is not None and p.comparable}


@lru_cache(maxsize=8192)
def companion_matches(code: str, threshold: float = THRESHOLD) -> list[tuple[str, str, float]]:
    """The companion functions or classes that a top-level definition of ``code`` matches.

    Returns:
        (definition in ``code``, companion's qualified name, score), best first.
    """
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return []
    found, lines = [], code.splitlines()
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        mine = fingerprint(_segment(lines, node))
        for name, theirs in _companion_prints().items():
            score = similarity(mine, theirs)
            if score >= threshold:
                found.append((node.name, name, score))
    found.sort(key=lambda match: -match[2])
    return found
