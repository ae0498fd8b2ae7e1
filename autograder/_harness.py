"""Kernel-side half of the grader: runs inside the learner's kernel, and decides nothing.

The grader starts a fresh kernel and, before any learner code runs, calls :func:`install`: it
imports the chapter's modules (all of the companion when the chapter uses it), snapshots what a
submission could tamper with (IPython's hooks, ``sys`` hooks, builtins, ``torch.Tensor``
comparisons, the attributes and function code of those modules) and adds an audit hook that keeps
the companion's reference implementation out of reach for the rest of the kernel's life: its source
files cannot be opened, its code cannot be re-executed, copied into a new function or transplanted
into another one.

Each test cell is then sent as one call, ``run_test(grade_id, visible, hidden, base)``: it restores
the snapshot, runs the visible tests in a copy of the learner's namespace, then runs the hidden
tests, whose :func:`autograder.checks.hidden_test` call lands in :func:`_probe`: the learner's
half runs on every hidden input with the whole companion switched off (and no subprocess may
start), and its results are converted to plain data. Everything is written to ``base`` as data
(:mod:`autograder.transport`). The verdict is reached in the grader's own process, which compares
that data with the reference; nothing printed or changed in this kernel can forge it.
"""

from __future__ import annotations

import builtins
import json
import os
import sys
import threading
import types

_MISSING = object()
_SHELL_METHODS = (
    "showtraceback",
    "_showtraceback",
    "showsyntaxerror",
    "showindentationerror",
    "run_cell",
    "run_cell_async",
    "_run_cell",
    "run_ast_nodes",
    "run_code",
    "transform_cell",
    "transform_ast",
    "should_run_async",
    "user_expressions",
    "CustomTB",
)
_TENSOR_ATTRS = (
    "__eq__",
    "__ne__",
    "__bool__",
    "__float__",
    "__int__",
    "__len__",
    "__iter__",
    "__getitem__",
    "allclose",
    "equal",
    "eq",
    "isclose",
    "all",
    "any",
    "item",
    "tolist",
    "detach",
    "clone",
    "cpu",
    "float",
    "double",
    "to",
    "size",
    "dim",
    "numel",
)
# Audit events that start another program: refused while a learner's function is probed.
_SPAWN_EVENTS = frozenset(
    {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.startfile"}
)
_AUDITED = frozenset(
    {"open", "exec", "function.__new__", "code.__new__", "object.__setattr__"} | _SPAWN_EVENTS
)
# Bytecode shorter than this (`return self.x`) is too common to identify the reference by.
_MIN_CODE_BYTES = 32
# Modules that open source files only to display a traceback or a warning (IPython's tracebacks
# count a file's lines with a plain open()): refused without a review flag, as nothing reaches
# the learner's code.
_SOURCE_DISPLAY = frozenset({"linecache", "IPython.core.tbtools"})
_state: dict = {}


def install(payload_path: str) -> None:
    """Snapshot the environment and guard the reference; called once per kernel, first."""
    with open(payload_path, encoding="utf-8") as handle:
        payload = json.load(handle)
    os.remove(payload_path)
    import importlib

    from autograder import checks, transport  # noqa: F401 (snapshotted below, as all autograder.*)

    modules = {}
    for name in payload.get("protect", []):
        try:
            modules[name] = importlib.import_module(name)
        except Exception:  # a module the chapter does not use may be missing; nothing to guard
            continue
    references = [r for r in payload.get("references", []) if r.split(".")[0] in modules]
    for name in references:
        _import_all(name)
    for name in list(sys.modules):
        if name.startswith(("companion.", "autograder.")) and sys.modules[name] is not None:
            modules.setdefault(name, sys.modules[name])
    if "torch" in modules:
        checks._capture_torch()
    targets = [sys.modules[name] for name in references if name in sys.modules]
    functions = checks.reference_functions(*targets)
    shell = _shell()
    _state.update(
        modules={name: (module, dict(vars(module))) for name, module in modules.items()},
        code=_snapshot_code(modules),
        tensor=_snapshot_tensor(modules.get("torch")),
        shell=_snapshot_shell(shell),
        sys=_snapshot_sys(),
        exec=builtins.exec,
        compile=builtins.compile,
        BaseException=BaseException,
        KeyboardInterrupt=KeyboardInterrupt,
        user_ns=shell.user_ns if shell is not None else None,
        builtin_names=frozenset(vars(builtins)),
        checks=checks,
        references=[(f, f.__code__, checks._blocked(f, name)) for f, name in functions],
        reference_set=frozenset(f for f, _ in functions),
        reference_dirs=tuple(_package_dir(m) for m in targets if _package_dir(m)),
        reference_bytes=_code_bytes(f.__code__ for f, _ in functions),
        probing=False,
        violations=[],
    )
    if _state["reference_dirs"]:
        sys.addaudithook(_audit)


def run_test(grade_id: str, visible: str, hidden: str, base: str) -> None:
    """Run one test cell: the visible part, then the learner's half of the hidden tests.

    Writes ``{"grade_id", "visible", "probe", "hidden_error", "flags", "threads"}`` as data to
    ``base`` (see :mod:`autograder.transport`). ``visible`` and ``hidden_error`` are None or
    ``[exception name, message]``; ``probe`` is None or one entry per hidden input,
    ``{"seed": ..., "data": ...}`` or ``{"seed": ..., "error": [name, message]}``.
    """
    state = _state
    report = {
        "grade_id": grade_id,
        "visible": None,
        "probe": None,
        "hidden_error": None,
        "flags": [],
        "threads": [],
    }
    report["flags"] = reset()
    threads_before = {thread.ident for thread in threading.enumerate()}
    namespace = _test_namespace()
    try:
        state["exec"](state["compile"](visible, f"<tests {grade_id}>", "exec"), namespace)
    except state["KeyboardInterrupt"]:
        raise
    except state["BaseException"] as exc:  # SystemExit fails a test too
        report["visible"] = [type(exc).__name__, _message(exc)]
    finally:
        _merge_back(namespace)
    if report["visible"] is None and hidden.strip():
        report["flags"] += [f for f in reset() if f not in report["flags"]]
        namespace = _test_namespace()
        checks = state["checks"]
        state["results"] = None
        checks._PROBE = _probe
        try:
            code = state["compile"](hidden, f"<hidden tests {grade_id}>", "exec")
            state["exec"](code, namespace)
        except state["KeyboardInterrupt"]:
            raise
        except state["BaseException"] as exc:
            report["hidden_error"] = [type(exc).__name__, _message(exc)]
        finally:
            checks._PROBE = None
        report["probe"] = state.pop("results", None)
    report["flags"] += state["violations"]
    state["violations"] = []
    calls = state["checks"]._REFERENCE_CALLS
    report["flags"] += [f"the code called the companion's reference ({name})" for name in calls]
    calls.clear()
    report["threads"] = sorted(  # started by the tests' calls and still running
        t.name for t in threading.enumerate() if t.ident not in threads_before and t.is_alive()
    )[:5]
    from autograder.transport import dump

    dump(report, base)


def _probe(run, seeds, block) -> None:
    """The kernel's side of ``hidden_test``: the learner's half on every input, as data."""
    state = _state
    checks = state["checks"]
    extra = checks.reference_functions(*(checks._resolve(b, strict=True) for b in block))
    swaps = state["references"] + [(f, f.__code__, checks._blocked(f, n)) for f, n in extra]
    results = []
    for seed in seeds:
        entry = {"seed": seed}
        state["probing"] = True
        try:
            for function, _, blocked in swaps:
                function.__code__ = blocked
            entry["data"] = checks.to_data(run(seed))
        except state["KeyboardInterrupt"]:
            raise
        except state["BaseException"] as exc:
            entry.pop("data", None)
            entry["error"] = [type(exc).__name__, _message(exc)]
        finally:
            for function, original, _ in reversed(swaps):
                function.__code__ = original
            state["probing"] = False
        results.append(entry)
    state["results"] = results


def _audit(event: str, args: tuple) -> None:
    """Keep the reference out of reach: its files, its code, and other programs while probing."""
    if event not in _AUDITED:
        return
    state = _state
    if event == "open":
        path = args[0]
        if isinstance(path, (str, bytes, os.PathLike)) and _is_reference_path(path):
            if _from_source_display():  # a traceback or warning showing a source line
                raise PermissionError("the companion's source is not readable while grading")
            _refuse(f"reading {os.fsdecode(path)!r}", PermissionError)
    elif event == "exec":
        code = args[0]
        if isinstance(code, types.CodeType) and _is_reference_path(code.co_filename):
            _refuse(f"running the code of {code.co_filename!r} again", None)
    elif event == "function.__new__":
        if _is_reference_code(args[0]):
            _refuse(f"copying the reference function {args[0].co_name!r}", None)
    elif event == "code.__new__":
        code_bytes = args[0]
        if isinstance(code_bytes, bytes) and code_bytes in state["reference_bytes"]:
            _refuse(f"copying the code of the reference ({args[2]!r})", None)
    elif event == "object.__setattr__":
        target, name, value = args
        if (
            name == "__code__"
            and _is_reference_code(value)
            and target not in state["reference_set"]
        ):
            _refuse(f"moving the reference's code into {getattr(target, '__name__', '?')!r}", None)
    elif state["probing"]:
        _refuse(f"starting another program ({event})", None)


def _from_source_display() -> bool:
    frame = sys._getframe(2)
    for _ in range(8):
        if frame is None:
            return False
        if frame.f_globals.get("__name__") in _SOURCE_DISPLAY:
            return True
        frame = frame.f_back
    return False


def _refuse(what: str, kind) -> None:
    message = (
        f"{what} is blocked while grading: the companion is the reference implementation, and "
        "the exercise must be implemented in your own code, not delegated to the companion"
    )
    violations = _state["violations"]
    flag = f"the code tried {what.split(' (')[0]}"
    if flag not in violations and len(violations) < 5:
        violations.append(flag)
    if kind is None:
        raise _state["checks"].ReferenceCallError(message)
    raise kind(message)


def _is_reference_path(path) -> bool:
    dirs = _state["reference_dirs"]
    try:
        real = os.path.realpath(os.fsdecode(path))
    except (TypeError, ValueError, OSError):
        return False
    return any(real == d or real.startswith(d + os.sep) for d in dirs)


def _is_reference_code(code) -> bool:
    if not isinstance(code, types.CodeType):
        return False
    filename = code.co_filename
    if filename.startswith("<"):
        return code.co_code in _state["reference_bytes"]
    return _is_reference_path(filename) or code.co_code in _state["reference_bytes"]


def _import_all(package: str) -> None:
    """Import a package and every submodule, so nothing of it needs its files later."""
    import importlib
    import pkgutil

    module = importlib.import_module(package)
    for info in pkgutil.walk_packages(getattr(module, "__path__", []), prefix=package + "."):
        try:
            importlib.import_module(info.name)
        except Exception:  # an optional dependency is missing: that module is unusable anyway
            continue


def _package_dir(module) -> str | None:
    path = getattr(module, "__file__", None)
    return os.path.realpath(os.path.dirname(path)) if path else None


def _code_bytes(codes) -> frozenset:
    found, stack = set(), list(codes)
    while stack:
        code = stack.pop()
        if len(code.co_code) >= _MIN_CODE_BYTES:
            found.add(code.co_code)
        stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return frozenset(found)


def reset() -> list[str]:
    """Undo whatever learner code changed in the snapshotted hooks, helpers and modules.

    Returns:
        Review flags naming what learner code had changed in the grader's own modules.
    """
    state = _state
    flags = []
    for name, (module, snapshot) in state["modules"].items():
        current = vars(module)
        for key, value in snapshot.items():
            if current.get(key, _MISSING) is not value:
                if name.startswith("autograder") and key not in ("_PROBE", "_COLLECT"):
                    flags.append(f"the code changed the grader's {name}.{key}")
                try:
                    setattr(module, key, value)
                except (AttributeError, TypeError):
                    continue
        if sys.modules.get(name) is not module:
            if name.startswith("autograder"):
                flags.append(f"the code replaced the grader's module {name}")
            sys.modules[name] = module
    for function, code, defaults, kwdefaults in state["code"]:
        if function.__code__ is not code:
            if function.__module__.startswith("autograder"):
                flags.append(f"the code changed the grader's {function.__qualname__}")
            function.__code__ = code
        if function.__defaults__ is not defaults:
            function.__defaults__ = defaults
        if function.__kwdefaults__ is not kwdefaults:
            function.__kwdefaults__ = kwdefaults
    for cls, name, value in state["tensor"]:
        _restore_class_attr(cls, name, value)
    _restore_sys(state["sys"])
    _restore_shell(state["shell"])
    return flags[:5]


def _shell():
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()


def _snapshot_code(modules: dict) -> list:
    """(function, __code__, defaults) of every Python function a protected module defines."""
    import types

    found, seen = [], set()
    for name, module in modules.items():
        for value in list(vars(module).values()):
            candidates = [value]
            if isinstance(value, type) and getattr(value, "__module__", "") == name:
                candidates = list(vars(value).values())
            for item in candidates:
                item = getattr(item, "__func__", item)
                if (
                    isinstance(item, types.FunctionType)
                    and getattr(item, "__module__", None) == name
                    and id(item) not in seen
                ):
                    seen.add(id(item))
                    found.append((item, item.__code__, item.__defaults__, item.__kwdefaults__))
    return found


def _snapshot_tensor(torch) -> list:
    if torch is None:
        return []
    found = []
    for cls in (torch.Tensor, torch.nn.Parameter):
        for name in _TENSOR_ATTRS:
            found.append((cls, name, vars(cls).get(name, _MISSING)))
    return found


def _restore_class_attr(cls, name: str, value) -> None:
    current = vars(cls).get(name, _MISSING)
    if current is value:
        return
    try:
        if value is _MISSING:
            delattr(cls, name)
        else:
            setattr(cls, name, value)
    except (AttributeError, TypeError):
        pass


def _snapshot_sys() -> dict:
    return {
        "excepthook": sys.excepthook,
        "displayhook": sys.displayhook,
        "stdout": sys.stdout,
        "stderr": sys.stderr,
        "trace": sys.gettrace(),
        "profile": sys.getprofile(),
        "meta_path": list(sys.meta_path),
        "path_hooks": list(sys.path_hooks),
        "recursionlimit": sys.getrecursionlimit(),
    }


def _restore_sys(snap: dict) -> None:
    sys.excepthook, sys.displayhook = snap["excepthook"], snap["displayhook"]
    sys.stdout, sys.stderr = snap["stdout"], snap["stderr"]
    sys.settrace(snap["trace"])
    sys.setprofile(snap["profile"])
    threading.settrace(None)
    threading.setprofile(None)
    # Import hooks the learner defined (in __main__) could hand a hidden test fake modules.
    sys.meta_path[:] = [f for f in sys.meta_path if f in snap["meta_path"] or not _is_user(f)]
    sys.path_hooks[:] = [h for h in sys.path_hooks if h in snap["path_hooks"] or not _is_user(h)]
    sys.setrecursionlimit(max(snap["recursionlimit"], 1000))


def _is_user(obj) -> bool:
    for candidate in (obj, type(obj), getattr(obj, "__func__", None)):
        if getattr(candidate, "__module__", None) == "__main__":
            return True
    return False


def _snapshot_shell(shell) -> dict | None:
    if shell is None:
        return None
    classes = [cls for cls in type(shell).__mro__ if cls.__module__.startswith(("IPython", "ipy"))]
    manager = shell.input_transformer_manager
    return {
        "shell": shell,
        "instance": {name: vars(shell).get(name, _MISSING) for name in _SHELL_METHODS},
        "classes": [
            (cls, name, vars(cls).get(name, _MISSING)) for cls in classes for name in _SHELL_METHODS
        ],
        "manager": manager,
        "manager_lists": {
            name: list(getattr(manager, name))
            for name in ("cleanup_transforms", "line_transforms", "token_transformers")
        },
        "input_transformers_post": list(shell.input_transformers_post),
        "ast_transformers": list(shell.ast_transformers),
        "events": {name: list(cbs) for name, cbs in shell.events.callbacks.items()},
        "compile": shell.compile,
        "compile_flags": shell.compile.flags,
        "custom_exceptions": shell.custom_exceptions,
        "builtins_ns": shell.user_ns.get("__builtins__", builtins),
    }


def _restore_shell(snap: dict | None) -> None:
    if snap is None:
        return
    shell = snap["shell"]
    for name, value in snap["instance"].items():
        current = vars(shell).get(name, _MISSING)
        if current is not value:
            if value is _MISSING:
                vars(shell).pop(name, None)
            else:
                vars(shell)[name] = value
    for cls, name, value in snap["classes"]:
        _restore_class_attr(cls, name, value)
    shell.input_transformer_manager = snap["manager"]
    for name, items in snap["manager_lists"].items():
        getattr(snap["manager"], name)[:] = items
    shell.input_transformers_post = list(snap["input_transformers_post"])
    shell.ast_transformers = list(snap["ast_transformers"])
    callbacks = shell.events.callbacks
    for name in list(callbacks):
        callbacks[name][:] = snap["events"].get(name, [])
    shell.compile = snap["compile"]
    shell.compile.flags = snap["compile_flags"]
    shell.custom_exceptions = snap["custom_exceptions"]
    shell.user_ns["__builtins__"] = snap["builtins_ns"]


def _test_namespace() -> dict:
    """The learner's globals, minus names that shadow builtins (``isinstance = lambda *a: True``)."""
    user_ns = _state["user_ns"]
    if user_ns is None:
        import __main__

        user_ns = vars(__main__)
    builtin_names = _state["builtin_names"]
    namespace = {
        key: value
        for key, value in user_ns.items()
        if key not in builtin_names or value is vars(builtins).get(key)
    }
    namespace["__builtins__"] = builtins
    return namespace


def _merge_back(namespace: dict) -> None:
    """Names a test cell bound stay visible to later cells, as in a plain notebook run."""
    user_ns = _state["user_ns"]
    if user_ns is None:
        return
    for key, value in namespace.items():
        if key != "__builtins__" and user_ns.get(key, _MISSING) is not value:
            user_ns[key] = value


def _message(exc: BaseException) -> str:
    try:
        return BaseException.__str__(exc)
    except Exception:  # a broken args tuple; the type name is still reported
        return ""
