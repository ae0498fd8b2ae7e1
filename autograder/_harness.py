"""Kernel-side half of the grader: runs inside the learner's kernel (the grader reads only its tag).

The grader starts a fresh kernel and, before any learner code runs, calls :func:`install`: it reads
the chapter's test cells from a private file (then deletes it) and snapshots everything a submission
could tamper with to fake a pass: IPython's error display and input/AST transformers, event hooks,
``sys`` hooks, builtins, ``torch.Tensor`` comparisons, and the attributes and function code of
every module the chapter imports at top level (``torch.testing``, the ``companion`` reference,
``autograder.checks``...). Each test cell is then sent as one call, ``run_test(grade_id,
nonce)``: it restores the snapshot, compiles the test source it received at install (so IPython's
transformers never touch it), runs it in a copy of the learner's namespace without names that
shadow builtins, and prints a verdict line tagged with a fresh per-cell nonce. The grader counts a
test as passed only when that exact verdict says so. Code that targets this module's own internals
can still cheat (nothing in-process can stop it); the grader's static scan flags such code for
review.
"""

from __future__ import annotations

import builtins
import json
import os
import sys
import threading

VERDICT_TAG = "\x1eAUTOGRADER-VERDICT"
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
_state: dict = {}


def install(payload_path: str) -> None:
    """Load the tests and snapshot the environment; called once per kernel, before learner code."""
    with open(payload_path, encoding="utf-8") as handle:
        payload = json.load(handle)
    os.remove(payload_path)
    import importlib

    modules = {}
    for name in payload.get("protect", []):
        try:
            modules[name] = importlib.import_module(name)
        except Exception:  # a module the chapter does not use may be missing; nothing to guard
            continue
    for name in list(sys.modules):
        if name.startswith(("companion.", "autograder.")) and sys.modules[name] is not None:
            modules.setdefault(name, sys.modules[name])
    checks = sys.modules.get("autograder.checks")
    if checks is not None and "torch" in modules:
        checks._capture_torch()
    shell = _shell()
    _state.update(
        tests=dict(payload["tests"]),
        modules={name: (module, dict(vars(module))) for name, module in modules.items()},
        code=_snapshot_code(modules),
        tensor=_snapshot_tensor(modules.get("torch")),
        shell=_snapshot_shell(shell),
        sys=_snapshot_sys(),
        threads={thread.ident for thread in threading.enumerate()},
        exec=builtins.exec,
        compile=builtins.compile,
        write=sys.stdout.write,
        flush=sys.stdout.flush,
        dumps=json.dumps,
        BaseException=BaseException,
        user_ns=shell.user_ns if shell is not None else None,
        builtin_names=frozenset(vars(builtins)),
    )


def run_test(grade_id: str, nonce: str) -> None:
    """Run one test cell (received at install) and print its verdict tagged with ``nonce``."""
    state = _state
    write, flush, dumps = state["write"], state["flush"], state["dumps"]
    verdict = {"grade_id": grade_id, "nonce": nonce, "passed": False}
    try:
        reset()
        source = state["tests"].get(grade_id)
        if source is None:
            raise LookupError(f"no test cell {grade_id!r} was installed")
        code = state["compile"](source, f"<tests {grade_id}>", "exec")
        del source
        namespace = _test_namespace()
        try:
            state["exec"](code, namespace)
        finally:
            _merge_back(namespace)
        verdict["passed"] = True
    except state["BaseException"] as exc:  # KeyboardInterrupt and SystemExit fail a test too
        verdict["ename"] = type(exc).__name__
        verdict["evalue"] = _message(exc)
    new_threads = [
        t.name for t in threading.enumerate() if t.ident not in state["threads"] and t.is_alive()
    ]
    if new_threads:
        verdict["threads"] = sorted(new_threads)[:5]
    write(f"{VERDICT_TAG} {dumps(verdict)}\n")
    flush()


def reset() -> None:
    """Undo whatever learner code changed in the snapshotted hooks, helpers and modules."""
    state = _state
    for name, (module, snapshot) in state["modules"].items():
        current = vars(module)
        for key, value in snapshot.items():
            if current.get(key, _MISSING) is not value:
                try:
                    setattr(module, key, value)
                except (AttributeError, TypeError):
                    continue
        if sys.modules.get(name) is not module:
            sys.modules[name] = module
    for function, code, defaults, kwdefaults in state["code"]:
        if function.__code__ is not code:
            function.__code__ = code
        if function.__defaults__ is not defaults:
            function.__defaults__ = defaults
        if function.__kwdefaults__ is not kwdefaults:
            function.__kwdefaults__ = kwdefaults
    for cls, name, value in state["tensor"]:
        _restore_class_attr(cls, name, value)
    _restore_sys(state["sys"])
    _restore_shell(state["shell"])


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
