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
import operator
import os
import re
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
# Audit events that copy the kernel (a child that keeps the companion from before it was switched
# off) and that search the interpreter's objects: noted when a notebook cell's code asks for them.
_FORK_EVENTS = frozenset({"os.fork", "os.forkpty"})
_HEAP_EVENTS = frozenset({"gc.get_objects", "gc.get_referrers", "gc.get_referents"})
# The code of a notebook cell (ipykernel names it /tmp/ipykernel_<pid>/<hash>.py; plain IPython
# <ipython-input-...>): the learner's, or the chapter's own teaching cells.
_CELL_FILE = re.compile(r"^<ipython-input-|ipykernel_\d+[/\\]-?\d+\.py$")
# Standard-library modules between a caller and a process or heap search it asked for.
_PLUMBING = frozenset({"os", "subprocess", "multiprocessing", "concurrent", "asyncio", "gc", "pty"})
_CRAWL_EVENTS = frozenset(
    {"os.listdir", "os.scandir", "glob.glob", "pathlib.Path.glob", "pathlib.Path.rglob"}
)
_AUDITED = frozenset(
    {"open", "exec", "function.__new__", "code.__new__", "object.__setattr__"}
    | _SPAWN_EVENTS
    | _FORK_EVENTS
    | _HEAP_EVENTS
    | _CRAWL_EVENTS
)
# Bytecode shorter than this (`return self.x`) is too common to identify the reference by.
_MIN_CODE_BYTES = 32
# Modules that open source files only to display a traceback or a warning (IPython's tracebacks
# count a file's lines with a plain open()): refused without a review flag, as nothing reaches
# the learner's code.
_SOURCE_DISPLAY = frozenset({"linecache", "IPython.core.tbtools"})
# Libraries whose callables are fingerprinted before the learner's first cell: a function, class or
# method of theirs that is later replaced, wrapped, removed or given new code is restored before each
# test and named for review. Every loaded companion.* module is added; classes found in these
# modules are fingerprinted with their bases from the same libraries.
_LIBRARIES = (  # the most specific public module first: flags name what a learner wrote
    "builtins",
    "json",
    "pickle",
    "signal",
    "torch.amp",
    "torch.optim",
    "torch.optim.lr_scheduler",
    "torch.nn",
    "torch.nn.functional",
    "torch.nn.init",
    "torch.nn.utils",
    "torch.autograd",
    "torch.utils.data",
    "torch.testing",
    "torch",
    "torch.amp.grad_scaler",
    "torch.amp.autocast_mode",
    "torch.nn.modules.module",
    "torch.optim.optimizer",
    "numpy",
    "numpy.random",
    "numpy.linalg",
    "numpy.testing",
    "companion",
)
_LIBRARY_ROOTS = frozenset({"torch", "numpy", "companion", "json", "pickle"})
# Set by the kernel itself around every cell (ipykernel forwards input() to the front end).
_KERNEL_OWNED = frozenset(
    {("builtins", "input"), ("builtins", "raw_input"), ("builtins", "getpass")}
)
_IMMUTABLE_TYPE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: built-in types refuse new attributes anyway
_MAX_FLAGS = 8
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
    tqdm = sys.modules.get("tqdm.std")
    if tqdm is not None:  # no monitor thread, which a first long bar starts (maybe in a test,
        tqdm.tqdm.monitor_interval = 0  # where a thread left running is flagged): bars still work
    for name in list(sys.modules):
        if name.startswith(("companion.", "autograder.")) and sys.modules[name] is not None:
            modules.setdefault(name, sys.modules[name])
    if "torch" in modules:
        checks._capture_torch()
    targets = [sys.modules[name] for name in references if name in sys.modules]
    functions = checks.reference_functions(*targets)
    shell = _shell()
    signals = _snapshot_signals()  # wraps signal.signal first: the fingerprint sees the wrapper
    fingerprint = _fingerprint(modules)
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
        fingerprint=fingerprint,
        code_touched=set(),
        swapped=frozenset(),
        private_data=_private_data(targets),
        signals=signals,
        cwd_parents=_parents(os.getcwd()),
        pid=str(os.getpid()),
        probing=False,
        violations=[],
        internal=False,
    )
    _state.update(first_pids=frozenset(_processes()), own_namespace=_in_own_pid_namespace())
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
    signal_before = _sigint()
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
        state["held"], held_flags = _learner_holdings()
        report["flags"] += [f for f in held_flags if f not in report["flags"]]
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
    after = library_changes() + _signal_changes()
    if _sigint() is not signal_before:  # a learner's function left its own SIGINT handler
        after.append("the code caught SIGINT (signal.signal), so it cannot be stopped")
        _restore_sigint(signal_before)
    suspects = state["checks"]._SUSPECTS
    after += [
        f"the code returned {what}: what it says of itself is not what it holds"
        if " that redefines " in what
        else f"the code returned {what}, whose comparisons always agree"
        for what in suspects
    ]
    suspects.clear()
    for flag in after + state["violations"]:
        if flag not in report["flags"]:
            report["flags"].append(flag)
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
    extra += state.pop("held", [])
    swaps = state["references"] + [(f, f.__code__, checks._blocked(f, n)) for f, n in extra]
    state["swapped"] = frozenset(f for f, _, _ in swaps)  # their own code goes back in after
    for name in _learner_threads():
        _violation(f"the code left a thread running ({name}) when the hidden tests began")
    stopped = _stop_learner_processes()
    if stopped and state.get("spawned") and set(stopped) - _loader_workers():
        _violation(
            f"the code left a process it started ({state['spawned']}) running when "
            "the hidden tests began; it was stopped"
        )
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
        changed = library_changes()
        if changed:  # results computed with a patched library prove nothing
            for flag in changed:
                _violation(flag)
            entry.pop("data", None)
            entry["error"] = [
                "TamperingSuspected",
                f"{changed[0]} while the hidden tests ran: results obtained with a changed "
                "library do not count",
            ]
        results.append(entry)
    state["swapped"] = frozenset()
    state["results"] = results


def _processes() -> dict[int, int]:
    """The processes this kernel can see in /proc: pid -> parent pid (read by the harness itself,
    not flagged as a learner's look at other processes)."""
    parents = {}
    _state["internal"] = True
    try:
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    fields = handle.read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue  # gone meanwhile
            parents[int(entry)] = int(fields[1])
    except OSError:
        pass  # no /proc: nothing to see
    finally:
        _state["internal"] = False
    return parents


def _learner_threads() -> list[str]:
    """Threads running code of a notebook cell (what they run was written there)."""
    found = []
    for thread in threading.enumerate():
        target = getattr(thread, "_target", None)
        code = getattr(target, "__code__", None) or getattr(type(thread).run, "__code__", None)
        if code is not None and _CELL_FILE.search(code.co_filename) and thread.is_alive():
            found.append(thread.name)
    return found


def _loader_workers() -> set[int]:
    """The worker processes of the DataLoaders alive in this kernel (started by torch)."""
    dataloader = sys.modules.get("torch.utils.data.dataloader")
    if dataloader is None:
        return set()
    import gc

    _state["internal"] = True  # the harness's own search, not a learner's
    try:
        iterators = [
            o for o in gc.get_objects() if isinstance(o, dataloader._MultiProcessingDataLoaderIter)
        ]
    finally:
        _state["internal"] = False
    return {w.pid for it in iterators for w in getattr(it, "_workers", ()) if w.pid}


def _in_own_pid_namespace() -> bool:
    """Whether the kernel runs in the sandbox's PID namespace (bubblewrap is its pid 1): then
    every process started after install() is the learner's."""
    _state["internal"] = True
    try:
        with open("/proc/1/cmdline", "rb") as handle:
            return b"bwrap" in handle.read().split(b"\0")[0]
    except OSError:
        return False
    finally:
        _state["internal"] = False


def _stop_learner_processes() -> list[int]:
    """Kill the processes learner code left running before the hidden tests probe it.

    A process forked in an earlier cell is a copy of the kernel from before the companion was
    switched off: the learner's function could hand it the hidden inputs and return its answers.
    In the sandbox every process started since install() goes (a double fork cannot escape);
    without one, only the kernel's descendants. A DataLoader's persistent workers go too.
    """
    import signal

    parents = _processes()
    me = os.getpid()
    if _state["own_namespace"]:
        doomed = [pid for pid in parents if pid not in _state["first_pids"] and pid != me]
    else:
        doomed, frontier = [], [me]
        while frontier:
            parent = frontier.pop()
            children = [pid for pid, ppid in parents.items() if ppid == parent]
            doomed += children
            frontier += children
    for pid in doomed:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    for pid in doomed:
        try:
            os.waitpid(pid, 0)  # the kernel's own children: reaped; others are not its to wait for
        except OSError:
            pass
    return doomed


def _audit(event: str, args: tuple) -> None:
    """Keep the reference out of reach: its files, its code, and other programs while probing."""
    if event not in _AUDITED:
        return
    state = _state
    if state.get("internal"):  # the harness's own look at /proc
        return
    if event in _CRAWL_EVENTS:
        _crawl(event, args)
    elif event == "open":
        path = args[0]
        if type(path) is str and (path.endswith(".ipynb") or path.startswith("/proc/")):
            _crawl(event, args)
        if not state["reference_dirs"]:
            return
        if (
            isinstance(path, (str, bytes, os.PathLike))
            and _is_reference_path(path)
            and not _is_shipped_data(path)
        ):
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
        if name == "__code__":
            state["code_touched"].add(id(target))  # checked by library_changes()
        if (
            name == "__code__"
            and _is_reference_code(value)
            and target not in state["reference_set"]
            and target not in state["swapped"]
        ):
            _refuse(f"moving the reference's code into {getattr(target, '__name__', '?')!r}", None)
    elif event in _HEAP_EVENTS:
        if _asked_by_a_cell():
            _violation(f"the code searched the interpreter's objects ({event})")
    elif event in _FORK_EVENTS:
        if _asked_by_a_cell():
            state["spawned"] = event
    elif state["probing"]:
        _refuse(f"starting another program ({event})", None)
    elif _asked_by_a_cell():
        state["spawned"] = event


def _asked_by_a_cell() -> bool:
    """Whether a notebook cell's code asked for the audited event, not a library's (a
    DataLoader's workers, companion's leak report): the first caller outside the standard
    library's process and heap modules."""
    frame = sys._getframe(2)  # the code that raised the event (1 is _audit)
    for _ in range(40):
        if frame is None:
            return False
        module = frame.f_globals.get("__name__") or ""
        if module.split(".")[0] in _PLUMBING:
            frame = frame.f_back
            continue
        return bool(_CELL_FILE.search(frame.f_code.co_filename))
    return False


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


def _is_shipped_data(path) -> bool:
    """A data file the companion ships (``companion/datasets/``: the digits), not its code."""
    try:
        real = os.path.realpath(os.fsdecode(path))
    except (TypeError, ValueError, OSError):
        return False
    return any(
        real.startswith(os.path.join(d, "datasets") + os.sep) and not real.endswith(".py")
        for d in _state["reference_dirs"]
    )


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
    flags = library_changes() + _signal_changes()
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
    return flags[: 2 * _MAX_FLAGS]


def _sigint():
    import signal

    return signal.getsignal(signal.SIGINT)


def _restore_sigint(handler) -> None:
    import signal

    try:
        _state["signals"]["signal"](signal.SIGINT, handler)
    except (KeyError, ValueError, OSError, TypeError):
        pass


def _parents(path: str) -> frozenset:
    real, found = os.path.realpath(path), set()
    while True:
        parent = os.path.dirname(real)
        if parent == real:
            break
        found.add(parent)
        real = parent
    return frozenset(found)


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


# ---------------------------------------------------------------------------------------------
# Library fingerprint: what learner code replaced in torch, numpy, builtins, json, pickle, companion


def _fingerprint(modules: dict) -> dict:
    """Every callable of the libraries (and its code), as it is before the learner's first cell."""
    import importlib

    for name in ("json", "pickle", "signal"):
        importlib.import_module(name)
    names = [n for n in _LIBRARIES if n in sys.modules]
    names += sorted(n for n in sys.modules if n.startswith("companion.") and n not in names)
    owners, functions, seen = [], {}, set()

    def add(owner, path: str, entries: dict) -> None:
        if id(owner) in seen:
            return
        seen.add(id(owner))
        keys = tuple(entries)
        owners.append([owner, path, keys, tuple(entries.values()), frozenset(vars(owner))])
        for value in entries.values():
            for item in (value, getattr(value, "__func__", None), getattr(value, "fget", None)):
                if isinstance(item, types.FunctionType):
                    functions[id(item)] = (item, path, item.__code__)

    public = _public_paths(names)

    def add_class(cls, path: str) -> None:
        if id(cls) in seen or cls.__flags__ & _IMMUTABLE_TYPE:
            return
        add(
            cls, public.get(id(cls), path), {k: v for k, v in vars(cls).items() if _is_behaviour(v)}
        )
        for base in cls.__mro__[1:]:
            if _library_of(base) is not None:
                add_class(base, f"{base.__module__}.{base.__qualname__}")

    for name in names:
        module = sys.modules[name]
        if not isinstance(module, types.ModuleType):
            continue
        entries = {
            k: v
            for k, v in vars(module).items()
            if (callable(v) or isinstance(v, types.ModuleType)) and (name, k) not in _KERNEL_OWNED
        }
        add(module, name, entries)
        for key, value in entries.items():
            if isinstance(value, type) and _library_of(value) is not None:
                add_class(value, f"{name}.{key}")
    dirs = {}
    for root in _LIBRARY_ROOTS:
        module = sys.modules.get(root)
        if module is not None and _package_dir(module):
            dirs[root] = _package_dir(module)
    return {"owners": owners, "functions": functions, "dirs": dirs}


def _public_paths(names: list[str]) -> dict:
    """id(class) -> the path a learner writes for it: the nearest package above its own module
    that exports it (torch.amp.GradScaler, torch.Tensor, torch.nn.Linear), else the first seen."""
    found: dict = {}
    for name in names:
        module = sys.modules[name]
        if not isinstance(module, types.ModuleType):
            continue
        for key, value in list(vars(module).items()):
            if not isinstance(value, type) or key.startswith("_"):
                continue
            home = str(value.__module__)
            rank = len(name) if home.startswith(name + ".") else 0 if home == name else -1
            if id(value) not in found or rank > found[id(value)][0]:
                found[id(value)] = (rank, f"{name}.{key}")
    return {key: path for key, (_, path) in found.items()}


def _is_behaviour(value) -> bool:
    return callable(value) or hasattr(type(value), "__get__")


def _library_of(cls) -> str | None:
    root = str(getattr(cls, "__module__", "") or "").split(".")[0]
    return root if root in _LIBRARY_ROOTS else None


def library_changes(restore: bool = True) -> list[str]:
    """Review flags for every fingerprinted callable that learner code replaced, added or removed.

    Args:
        restore: put the originals back (and remove added methods).

    Returns:
        Lines such as ``"the code replaced torch.amp.GradScaler.step"``, without duplicates.
    """
    fingerprint = _state.get("fingerprint")
    if not fingerprint:
        return []
    flags: list[str] = []
    for entry in fingerprint["owners"]:
        owner, path, keys, values, known = entry
        current = vars(owner)
        now = tuple(map(current.get, keys))
        if not all(map(operator.is_, now, values)):
            kept = list(values)
            for index, (key, was, new) in enumerate(zip(keys, values, now, strict=True)):
                if new is was:
                    continue
                if new is not None and _library_wrapper(new, was, fingerprint):
                    kept[index] = new  # the library wrapped its own method (optimizer hooks)
                    _accept_in_module_snapshot(owner, key, new)
                    continue
                verb = "removed" if key not in current else "replaced"
                _add_flag(flags, f"the code {verb} {path}.{key}")
                if restore:
                    _set(owner, key, was)
            entry[3] = tuple(kept)
        if isinstance(owner, type) and len(current) != len(known):
            for key in [k for k in current if k not in known]:
                value = current[key]
                inherited = next((vars(b)[key] for b in owner.__mro__[1:] if key in vars(b)), None)
                if inherited is not None and _library_wrapper(value, inherited, fingerprint):
                    entry[4] = entry[4] | {key}  # Optimizer hooks an inherited step (AdamW's)
                    continue
                if _is_behaviour(value) and not key.startswith("_abc"):
                    _add_flag(flags, f"the code added {path}.{key}")
                    if restore:
                        _set(owner, key, _MISSING)
    touched = _state["code_touched"]  # functions whose __code__ was assigned (audit hook)
    ids = [i for i in touched if i in fingerprint["functions"]]
    touched.clear()
    for function, path, code in map(fingerprint["functions"].get, ids):
        if function.__code__ is not code:
            _add_flag(flags, f"the code replaced the code of {path}.{function.__name__}")
            if restore:
                function.__code__ = code
    return flags


def _library_wrapper(new, original, fingerprint: dict) -> bool:
    """True for a wrapper a library made of its own method (``Optimizer`` hooks ``step`` so).

    The wrapper names the original as ``__wrapped__`` (functools.wraps) or holds it in its
    closure (torch._dynamo's first use replaces ``nn.Module.__init__`` and ``__setstate__`` so),
    and its code lies in a library's folder.
    """
    target = _innermost(original)
    inner = getattr(new, "__wrapped__", None)
    if inner is None or _innermost(inner) is not target:
        cells = getattr(new, "__closure__", None) or ()
        held = []
        for cell in cells:
            try:
                held.append(cell.cell_contents)
            except ValueError:  # an empty cell
                continue
        if not any(_innermost(item) is target for item in held):
            return False
    code = getattr(new, "__code__", None)
    if code is None:
        return False
    filename = os.path.realpath(code.co_filename)
    return any(filename.startswith(d + os.sep) for d in fingerprint["dirs"].values())


def _accept_in_module_snapshot(owner, key: str, value) -> None:
    """reset() restores protected modules' attributes: keep the library's own wrapper there too."""
    if isinstance(owner, types.ModuleType):
        entry = _state["modules"].get(owner.__name__)
        if entry is not None and entry[0] is owner:
            entry[1][key] = value


def _innermost(function):
    for _ in range(8):  # torch._dynamo wraps methods torch.optim has wrapped already
        inner = getattr(function, "__wrapped__", None)
        if inner is None:
            break
        function = inner
    return function


def _set(owner, key: str, value) -> None:
    try:
        if value is _MISSING:
            delattr(owner, key)
        else:
            setattr(owner, key, value)
    except (AttributeError, TypeError):
        pass


def _add_flag(flags: list, flag: str) -> None:
    if flag not in flags and len(flags) < _MAX_FLAGS:
        flags.append(flag)


# ---------------------------------------------------------------------------------------------
# What learner code keeps of the companion: closures and copied data


_SKIP_NAMES = frozenset(
    {"In", "Out", "_ih", "_oh", "_dh", "_", "__", "___", "exit", "quit", "get_ipython"}
)
_MAX_VISITS = 20000
_MAX_ITEMS = 2000


def _private_data(targets) -> dict:
    """{id: (object, name)} of the companion's private tables and constants, and their rows."""
    found: dict = {}
    prefixes = tuple(t.__name__ for t in targets if isinstance(t, types.ModuleType))
    if not prefixes:
        return found
    for name, module in list(sys.modules.items()):
        if not name.startswith(prefixes) or not isinstance(module, types.ModuleType):
            continue
        for key, value in list(vars(module).items()):
            if not key.startswith("_") or key.startswith("__"):
                continue
            if type(value) in (dict, list, tuple, set, frozenset) and len(value) >= 2:
                found[id(value)] = (value, f"{name}.{key}")
                rows = value.values() if type(value) is dict else value
                for row in list(rows)[:_MAX_ITEMS]:
                    if type(row) in (dict, list, tuple) and len(row) >= 2:
                        found.setdefault(id(row), (row, f"{name}.{key}"))
                    for item in row if type(row) in (list, tuple) else ():
                        if type(item).__name__ == "Pattern":
                            found.setdefault(id(item), (item, f"{name}.{key}"))
            elif type(value).__name__ == "Pattern":
                found[id(value)] = (value, f"{name}.{key}")
    return found


def _learner_holdings() -> tuple[list, list[str]]:
    """Reference functions reachable from the learner's names, and flags for copied data.

    Walks the learner's globals (containers, closures, defaults, partials, bound methods and
    the attributes of objects and classes defined in the notebook), so that a companion
    closure kept at cell time is switched off like the rest of the reference while a hidden
    test runs, and a private companion table kept or copied is named for review.
    """
    state = _state
    user_ns = state["user_ns"]
    if user_ns is None:
        return [], []
    data = state["private_data"]
    by_length: dict = {}
    for value, name in data.values():
        if type(value) in (dict, list, tuple):
            by_length.setdefault((type(value), len(value)), []).append((value, name))
    functions, flags, seen = [], [], set()
    stack = [v for k, v in list(user_ns.items()) if k not in _SKIP_NAMES and not _is_history(k)]
    visits = 0
    while stack and visits < _MAX_VISITS:
        value = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        visits += 1
        kind = type(value)
        hit = data.get(id(value))
        if hit is not None and hit[0] is value:
            _add_flag(flags, f"the code copied the companion's data ({hit[1]})")
            continue
        if kind in (dict, list, tuple, set, frozenset):
            for same, name in by_length.get((kind, len(value)), ()):
                if _equal(value, same):
                    _add_flag(flags, f"the code copied the companion's data ({name})")
            items = value.items() if kind is dict else value
            for item in list(items)[:_MAX_ITEMS]:
                stack.append(item)
        elif kind is types.FunctionType:
            code = value.__code__
            if _is_reference_path(code.co_filename):
                functions.append((value, f"{_module_of(code.co_filename)}.{code.co_qualname}"))
            else:
                stack.extend(c.cell_contents for c in value.__closure__ or () if _filled(c))
                stack.extend(value.__defaults__ or ())
                stack.extend((value.__kwdefaults__ or {}).values())
        elif kind is types.MethodType:
            stack += [value.__func__, value.__self__]
        elif kind.__name__ == "partial" and kind.__module__ == "functools":
            stack += [value.func, *value.args, *value.keywords.values()]
        elif isinstance(value, type):
            if value.__module__ == "__main__":
                stack.extend(list(vars(value).values()))
        elif getattr(kind, "__module__", None) == "__main__":
            stack.extend(list(getattr(value, "__dict__", {}).values()))
    return functions, flags


def _module_of(filename: str) -> str:
    """``companion.notebook`` for .../companion/notebook.py (a wrapper's __module__ may lie)."""
    real = os.path.realpath(filename)
    for folder in _state["reference_dirs"]:
        if real.startswith(folder + os.sep):
            relative = os.path.relpath(real, os.path.dirname(folder))
            return relative.removesuffix(".py").replace(os.sep, ".").removesuffix(".__init__")
    return "?"


def _is_history(name: str) -> bool:
    return name[:1] == "_" and name[1:].lstrip("i").isdigit()


def _filled(cell) -> bool:
    try:
        cell.cell_contents  # noqa: B018 (an empty cell raises ValueError)
    except ValueError:
        return False
    return True


_PLAIN = (int, float, bool, complex, str, bytes, type(None))


def _equal(a, b, _depth: int = 0) -> bool:
    """``a == b`` for the plain data a companion table holds, calling no method that learner code
    can replace: the types must match exactly, containers are compared item by item, and
    anything else (a tensor, a learner's object) is equal only to itself. A patched
    ``Tensor.__eq__`` that says True to everything must not make a list of tensors "a copy"
    of a companion table of strings."""
    kind = type(a)
    if a is b:
        return True
    if kind is not type(b) or _depth > 8:
        return False
    if kind in _PLAIN:
        return kind.__eq__(a, b) is True
    if kind in (list, tuple):
        return len(a) == len(b) and all(_equal(x, y, _depth + 1) for x, y in zip(a, b))
    if kind in (set, frozenset):
        return all(type(x) in _PLAIN for x in (*a, *b)) and kind.__eq__(a, b) is True
    if kind is dict:
        if len(a) != len(b) or not all(type(k) in _PLAIN for k in (*a, *b)):
            return False
        return all(
            dict.__contains__(b, k)
            and _equal(dict.__getitem__(a, k), dict.__getitem__(b, k), _depth + 1)
            for k in dict.keys(a)
        )
    return False


# ---------------------------------------------------------------------------------------------
# Tampering that scores nothing but is worth an instructor's look


def _crawl(event: str, args: tuple) -> None:
    """Flag reading other processes' /proc entries and searching the disk for notebooks."""
    state = _state
    if event == "open" or event in ("os.listdir", "os.scandir"):
        path = args[0] if args else None
        if path is None and event != "open":
            path = "."
        if not isinstance(path, (str, bytes, os.PathLike)):
            return
        try:
            path = os.fsdecode(path)
        except (TypeError, ValueError):
            return
        if event == "open":
            if path.endswith(".ipynb"):
                _violation(f"the code searched the disk for solved notebooks (opened {path!r})")
            elif path.startswith("/proc/"):
                _proc(path, "read")
            return
        real = os.path.realpath(path)
        if real == "/proc" or real.startswith("/proc/"):
            _proc(real, "listed")
        elif real in state["cwd_parents"] or real == os.path.expanduser("~"):
            _violation(f"the code searched the disk for solved notebooks (listed {real!r})")
    else:
        pattern = args[1] if event.startswith("pathlib") and len(args) > 1 else args[0]
        text = os.fsdecode(pattern) if isinstance(pattern, (str, bytes)) else str(pattern)
        if "ipynb" in text or text.startswith("/proc"):
            _violation(f"the code searched the disk for solved notebooks (glob {text[:60]!r})")


def _proc(path: str, verb: str) -> None:
    """Reading /proc/<another pid>/... or listing /proc itself: looking at other processes."""
    parts = path.split("/")
    entry = parts[2] if len(parts) > 2 else ""
    if entry in ("", "self", "thread-self", _state["pid"]) and not (
        entry == "" and verb == "listed"
    ):
        return
    if entry and not entry.isdigit() and entry not in ("self", "thread-self"):
        return  # /proc/cpuinfo, /proc/meminfo: facts about the machine, read by libraries
    _violation(f"the code read /proc ({verb} {path[:60]!r}): looking at other processes")


def _violation(flag: str) -> None:
    _add_flag(_state["violations"], flag)


def _snapshot_signals() -> dict:
    """SIGINT and SIGTERM as the kernel set them; ``signal.signal`` watched for learner calls."""
    import signal

    original = signal.signal
    if getattr(original, "__autograder_watch__", False):
        return _state.get("signals", {})

    def watched_signal(signalnum, handler):
        if signalnum in (signal.SIGINT, signal.SIGTERM) and _from_learner():
            name = signal.Signals(signalnum).name
            how = "ignored" if handler is signal.SIG_IGN else "caught"
            if handler is not signal.SIG_DFL and handler is not signal.default_int_handler:
                _violation(f"the code {how} {name} (signal.signal), so it cannot be stopped")
        return original(signalnum, handler)

    watched_signal.__autograder_watch__ = True
    watched_signal.__wrapped__ = original
    watched_signal.__doc__ = original.__doc__
    signal.signal = watched_signal
    return {
        "signal": original,
        "handlers": {s: signal.getsignal(s) for s in (signal.SIGTERM,)},
    }


def _from_learner() -> bool:
    user_ns = _state.get("user_ns")
    frame = sys._getframe(2)
    return user_ns is not None and frame is not None and frame.f_globals is user_ns


def _signal_changes() -> list[str]:
    """SIGTERM left ignored or caught, or SIGINT blocked, by learner code: flag and undo."""
    import signal

    snap = _state.get("signals") or {}
    flags = []
    for signum, handler in snap.get("handlers", {}).items():
        if signal.getsignal(signum) is not handler:
            _add_flag(
                flags, f"the code caught {signal.Signals(signum).name}, so it cannot be stopped"
            )
            try:
                snap["signal"](signum, handler)
            except (ValueError, OSError, TypeError):
                pass
    try:
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    except (AttributeError, OSError, ValueError):
        return flags
    stuck = {signal.SIGINT, signal.SIGTERM} & set(blocked)
    if stuck:
        _add_flag(
            flags, "the code blocked SIGINT/SIGTERM (pthread_sigmask), so it cannot be stopped"
        )
        signal.pthread_sigmask(signal.SIG_UNBLOCK, stuck)
    return flags
