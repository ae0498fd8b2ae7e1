"""Which cells of a notebook a piece of it needs: names bound and read, and global state.

A chapter's demonstration cells (its plots, timings, exports and training runs) cost most of a
grading and earn no points. :func:`needed` works backwards from the cells that must run (an
exercise and its tests) and keeps a cell when it binds or changes a name a kept cell reads, or
when it sets global state at its top level (a default dtype, a switch, an environment
variable). Everything else can be left out without changing what the kept cells compute. Used by
``autograder check`` (one exercise, in seconds) and by the submission corpus's tests (every
exercise, without the demonstrations).

A cell that is not plain Python (magics such as ``%%writefile``, shell lines) is always kept, and
taken to bind and read every name it mentions: what a magic does is not read here.
"""

from __future__ import annotations

import ast
import builtins
import re
import symtable
from collections.abc import Sequence

__all__ = ["imported", "needed", "names"]

_GLOBAL_STATE = re.compile(r"^set_|^use_|filterwarnings|^chdir$|^append$|^insert$")
# How many threads compute changes how fast, not what: a timing cell that sets them is not needed.
_SPEED_ONLY = re.compile(r"^set_num_(?:interop_)?threads$")
_BUILTINS = set(dir(builtins))


def needed(codes: Sequence[str], roots: set[int], stateless: set[int] = frozenset()) -> list[bool]:
    """For each cell of ``codes`` (in run order), whether the ``roots`` need it.

    Args:
        codes: the cells' code, in the order they run.
        roots: indices of the cells that must run (kept, with everything they need before them).
        stateless: indices of cells kept only for a name they bind, whatever state they set
            (another exercise's tests: what they seed or switch is theirs).

    Returns:
        One bool per cell. Cells after the last root are never needed.

    Example:
        >>> needed(["import torch", "x = 1", "y = 2", "print(x)"], {3})
        [True, True, False, True]
    """
    texts = list(codes)
    modules: set[str] = set()
    for text in texts:
        modules |= imported(text)
    # a name an earlier cell imports is there already: importing it again is no reason to run
    imported_before, seen = [], set()
    for text in texts:
        imported_before.append(set(seen))
        seen |= imported(text)
    keep = [False] * len(codes)
    wanted: set[str] = set()
    last = max(roots, default=-1)
    for index in range(last, -1, -1):
        try:
            binds, reads, state = names(texts[index], modules)
        except SyntaxError:  # magics, shell lines: kept, binding and reading all it mentions
            mentioned = set(re.findall(r"[A-Za-z_]\w*", texts[index]))
            binds, reads, state = mentioned, mentioned, True
        own = binds - (imported(texts[index]) & imported_before[index])
        if index in roots or (state and index not in stateless) or own & wanted:
            keep[index] = True
            wanted |= reads
    return keep


def imported(code: str) -> set[str]:
    """The names the code's import statements bind (modules, and what is taken from them), and
    the names bound to ``importlib.import_module(...)`` or ``__import__(...)``.

    Example:
        >>> sorted(imported("import numpy as np\\nfrom torch import nn"))
        ['nn', 'np']
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    found = {
        alias.asname or alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    }
    for node in ast.walk(tree):  # m = importlib.import_module(...) or __import__(...): a module too
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and _called(node.value) in ("import_module", "__import__")
        ):
            found |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return found


def _called(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def names(code: str, modules: set[str]) -> tuple[set[str], set[str], bool]:
    """(names the code binds or changes, names it reads, whether it sets global state).

    Only module-level names count: a function's parameters and locals are its own. A name the
    cell reads only after binding it itself is the cell's own, not a read.

    Args:
        code: one cell, as Python.
        modules: names bound to modules anywhere in the notebook (their functions change nothing,
            except those that set state: ``torch.manual_seed``, ``np.random.seed``...).

    Raises:
        SyntaxError: when the code does not parse.

    Example:
        >>> binds, reads, state = names("y = f(x)\\ntorch.manual_seed(0)", {"torch"})
        >>> sorted(binds), sorted(reads), state
        (['y'], ['f', 'torch', 'x'], True)
    """
    table = symtable.symtable(code, "<cell>", "exec")
    tree = ast.parse(code)
    binds = {s.get_name() for s in table.get_symbols() if s.is_assigned() or s.is_imported()}
    first: dict[str, bool] = {}  # name: whether its first top-level use reads it
    for _, name, is_read in sorted(_top_level_uses(tree)):
        first.setdefault(name, is_read)
    reads = {s.get_name() for s in table.get_symbols() if s.is_referenced()}
    reads = {name for name in reads if first.get(name, True)}
    stack = list(table.get_children())
    while stack:
        scope = stack.pop()
        stack.extend(scope.get_children())
        for symbol in scope.get_symbols():
            if symbol.is_global() or symbol.is_declared_global():
                if symbol.is_referenced() and symbol.get_name() not in binds:
                    reads.add(symbol.get_name())  # a helper using a global the cell defines
                if symbol.is_assigned() and symbol.is_declared_global():
                    binds.add(symbol.get_name())
    state = False
    top = set(map(id, _top_level_nodes(tree)))  # state set inside a function counts where called
    for node in ast.walk(tree):
        if isinstance(node, (ast.Attribute, ast.Subscript)) and not isinstance(node.ctx, ast.Load):
            root = _root(node)  # x.attr = ..., x[i] = ...: x changes (a module: global state)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            root = _root(node.func)  # x.method(...) may change x
            if root in modules:  # a module's function changes nothing, unless it sets state
                setter = _GLOBAL_STATE.search(node.func.attr) and not _SPEED_ONLY.match(
                    node.func.attr
                )
                state |= id(node) in top and bool(setter)
                continue
        else:
            continue
        if root in modules:
            state |= id(node) in top
        elif root in reads or root in binds:
            binds.add(root)
    return binds - _BUILTINS, reads - _BUILTINS, state


def _top_level_uses(tree: ast.AST):
    """((line, column), name, is_read) for each top-level use of a name: reads, assignments,
    and the names that ``def``, ``class`` and ``import`` bind (a definition binds at its line)."""
    for node in _top_level_nodes(tree):
        where = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
        if isinstance(node, ast.Name):
            yield where, node.id, isinstance(node.ctx, ast.Load)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            # decorators and defaults are read first (on lines at or before the definition)
            yield (node.lineno, node.col_offset + 1), node.name, False
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                yield where, alias.asname or alias.name.split(".")[0], False


def _top_level_nodes(tree: ast.AST):
    """The nodes of the module's own scope: definitions, but nothing inside them."""
    scopes = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        if node is tree or not isinstance(node, scopes):
            stack.extend(ast.iter_child_nodes(node))


def _root(node: ast.AST) -> str:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else ""
