"""Helpers for the hidden tests of the course notebooks.

A hidden test is split in two halves that never share a process when a notebook is graded:

- ``run(seed)`` runs in the learner's kernel: it builds the hidden input for ``seed``, calls the
  learner's function with the companion's reference switched off, and returns what came out as
  plain data (tensors, numbers, strings, containers of them; see :func:`to_data`);
- ``check(got, seed)`` runs in the grader's own process, which learner code never touches: it
  rebuilds the same input, computes the reference result with the companion, and compares with
  :func:`close`, raising ``AssertionError`` with the likely mistake.

:func:`hidden_test` ties them together. The results cross from the kernel as a file the grader
loads with ``torch.load(weights_only=True)`` (or JSON when the chapter has no tensors), so the
verdict cannot be forged from inside the kernel. Run outside the grader (nbgrader's own
autograde, or the instructor running the source notebook), both halves run in place.

Typical hidden test::

    from autograder.checks import close, hidden_test

    def _inputs(seed):
        torch.manual_seed(seed)
        ...
        return model, loader

    def _run(seed):  # the learner's kernel
        model, loader = _inputs(seed)
        return {"result": evaluate(model, loader, nn.CrossEntropyLoss(), "cpu")}

    def _check(got, seed):  # the grader
        import companion
        model, loader = _inputs(seed)
        expected = companion.evaluate(model, loader, nn.CrossEntropyLoss(), device="cpu")
        close(got["result"], expected, "evaluate() differs from the reference: ...")

    hidden_test(_run, _check, seeds=(0, 1))

Every failing check is reported, not only the first: the check runs on every seed and distinct
messages are listed. Inside one ``check``, independent checks go in ``with soft():`` blocks (or
``expect(condition, message)`` calls): a failure is recorded and the next block still runs, so a
learner with two bugs sees both. A check that depends on an earlier one stays a plain ``assert``
after the blocks (or inside the same block), so it is not reported as a consequence::

    def _check(got, seed):
        expected = ...
        with soft():
            close(got["loss"], expected["loss"], "the loss differs: is it the mean over the batch?")
        with soft():
            close(got["params"], expected["params"], "the weights differ: are gradients cleared?")
        expect(got["steps"] == 3, "the optimizer should step once per batch")
"""

from __future__ import annotations

import contextlib
import importlib
import math
import numbers
import sys
import types

__all__ = [
    "DEFAULT_REFERENCES",
    "OBJECT_KEY",
    "ReferenceCallError",
    "close",
    "expect",
    "hidden_test",
    "reference_unavailable",
    "run_check",
    "soft",
    "to_data",
]

# What a learner must not delegate to: a "module:qualname" names one function or class, a bare
# module or package name means every function and class defined in it (and in its loaded
# submodules), private helpers included. Names that do not exist are skipped.
DEFAULT_REFERENCES = ("companion",)
# to_data() turns an object that is not plain data into {OBJECT_KEY: "its type name"}.
OBJECT_KEY = "__autograder_object__"
_MAX_DEPTH = 32
# Values from float32 computations: Python floats are compared with float32's tolerance, since
# summing the same numbers in another order legitimately moves the last bits.
_FLOAT_RTOL, _FLOAT_ATOL = 1.3e-6, 1e-5
_assert_close = None  # torch.testing.assert_close, captured before learner code can patch it
_MAX_FAILURES = 4
# Methods whose override makes a value agree with anything (a float subclass whose __eq__ says True).
_COMPARISONS = frozenset(
    {
        "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__bool__", "__abs__",
        "__sub__", "__rsub__", "__float__", "__index__", "__torch_function__", "eq", "ne",
        "equal", "allclose", "isclose", "__array__",
    }
)  # fmt: skip


# What a tensor says of itself: a learner's tensor subclass that redefines any of these (a dtype
# that claims float32 over float64 storage) is lying to a check, whatever it earns.
_DESCRIPTIONS = frozenset(
    {
        "dtype", "shape", "device", "size", "dim", "ndim", "ndimension", "layout", "is_cuda",
        "is_floating_point", "is_complex", "type", "numel", "nelement", "stride",
        "is_contiguous", "data_ptr", "element_size", "itemsize", "nbytes", "requires_grad",
        "__torch_dispatch__", "__class__", "__len__", "tolist", "item", "numpy",
    }
)  # fmt: skip


class ReferenceCallError(RuntimeError):
    """A learner's exercise called the companion's reference implementation."""


def close(actual, expected, message: str, *, rtol: float | None = None, atol: float | None = None):
    """Assert that a learner's result matches the reference result.

    Tensors are compared with ``torch.testing.assert_close`` (its default tolerances for their
    dtype, same shape, dtype and device); Python floats with float32's tolerance; ints, bools,
    strings and None exactly; dicts by key set then value; lists and tuples by length then item.
    ``actual`` must be of a plain type: tensor subclasses, number subclasses and other objects
    are rejected, so an object whose ``__eq__`` always says True cannot pass.

    Args:
        actual: the learner's value.
        expected: the reference value (plain types only).
        message: what the mismatch most likely means, e.g. ``"parameters differ after 2 steps: are
            gradients cleared every step?"``. It becomes the feedback line; never put the solution in it.
        rtol: relative tolerance overriding the default (``atol`` must then be given too).
        atol: absolute tolerance overriding the default.

    Raises:
        AssertionError: with ``message`` (and a short detail) when the values differ or
            ``actual`` has an unexpected type.
        TypeError: if ``expected`` itself is of a type this helper does not compare (a test bug),
            or only one of ``rtol`` and ``atol`` is given.

    Example:
        >>> close(0.5, 0.5, "the mean loss differs from the reference")
        >>> close(1, 2, "wrong count")
        Traceback (most recent call last):
        AssertionError: wrong count (got 1, expected 2)
    """
    if (rtol is None) != (atol is None):
        raise TypeError("close(): give both rtol and atol, or neither")
    _compare(actual, expected, message, "", rtol, atol)


def _compare(actual, expected, message, where, rtol, atol):
    kind = _kind(expected)
    if kind is None or kind == "object":
        raise TypeError(
            f"close(): expected value{where} of type {type(expected).__name__} cannot be "
            "compared; pass tensors, numbers, strings, None, or dicts/lists of them"
        )
    if _kind(actual) != kind:
        hint = ""
        if kind == "number" and _kind(actual) == "tensor" and actual.numel() == 1:
            hint = ": return a Python number (use .item())"
        raise AssertionError(
            f"{message} (got {_describe(actual)}{where} where {_describe(expected)} was "
            f"expected{hint})"
        )
    if kind == "tensor":
        _compare_tensors(actual, expected, message, where, rtol, atol)
    elif kind == "number":
        _compare_numbers(actual, expected, message, where, rtol, atol)
    elif kind == "dict":
        got_keys, want_keys = set(dict.keys(actual)), set(dict.keys(expected))
        bad = [k for k in got_keys if type(k) not in (str, int)]
        if bad:
            raise AssertionError(f"{message} (keys{where} must be plain str or int)")
        if got_keys != want_keys:
            missing = ", ".join(repr(k) for k in sorted(want_keys - got_keys, key=str)[:5])
            extra = ", ".join(repr(k) for k in sorted(got_keys - want_keys, key=str)[:5])
            detail = "; ".join(
                part
                for part in (
                    f"missing keys {missing}" if missing else "",
                    f"unexpected keys {extra}" if extra else "",
                )
                if part
            )
            raise AssertionError(f"{message} ({detail}{where})")
        for key in sorted(want_keys, key=str):
            _compare(
                dict.__getitem__(actual, key),
                dict.__getitem__(expected, key),
                message,
                f"{where}[{key!r}]",
                rtol,
                atol,
            )
    elif kind == "sequence":
        got, want = _items(actual), _items(expected)
        if len(got) != len(want):
            raise AssertionError(f"{message} (length {len(got)}{where}, expected {len(want)})")
        for index, (a, e) in enumerate(zip(got, want, strict=True)):
            _compare(a, e, message, f"{where}[{index}]", rtol, atol)
    elif kind == "none":
        pass
    elif kind == "str":
        if not str.__eq__(actual, expected):
            raise AssertionError(f"{message} (got {actual!r}{where}, expected {expected!r})")


def _kind(value) -> str | None:
    t = type(value)
    if t in (int, float, bool) or _is_numpy_number(value):
        return "number"
    if t is str:
        return "str"
    if value is None:
        return "none"
    if t in (list, tuple):
        return "sequence"
    if isinstance(value, dict) and t.__module__ in ("builtins", "collections"):
        if t is dict and len(value) == 1 and OBJECT_KEY in value:
            return "object"
        return "dict"
    torch = _torch()
    if torch is not None and t in (torch.Tensor, torch.nn.Parameter):
        return "tensor"
    return None


def _is_numpy_number(value) -> bool:
    """A NumPy integer or floating scalar (np.float64, np.float32, np.int64...)."""
    t = type(value)
    return (
        t.__module__ == "numpy"
        and isinstance(value, numbers.Real)
        and t.__name__ != "bool"
        and not t.__name__.startswith("bool")
    )


def _describe(value) -> str:
    kind = _kind(value)
    if kind == "tensor":
        if value.dim() == 0:
            return "a 0-d tensor"
        return f"a tensor of shape {tuple(value.shape)}"
    if kind == "object":
        return f"an object of type {value[OBJECT_KEY]}"
    if kind is None:
        return f"an object of type {type(value).__name__}"
    if kind == "number" and type(value) not in (int, float, bool):
        return f"a NumPy {type(value).__name__}"
    return f"a {type(value).__name__}"


def _items(value) -> list:
    return list(tuple.__iter__(value)) if type(value) is tuple else list(list.__iter__(value))


def _compare_numbers(actual, expected, message, where, rtol, atol):
    if type(expected) is bool or type(actual) is bool or type(expected) is int:
        integral = type(actual) in (int, bool) or (
            _is_numpy_number(actual)
            and float(actual).is_integer()
            and "int" in type(actual).__name__
        )
        same = integral and int(actual) == int(expected)
        if type(expected) is bool:
            same = type(actual) is bool and actual is expected
    else:
        a, e = float(actual), float(expected)
        rtol = _FLOAT_RTOL if rtol is None else rtol
        atol = _FLOAT_ATOL if atol is None else atol
        same = (math.isnan(a) and math.isnan(e)) or math.isclose(a, e, rel_tol=rtol, abs_tol=atol)
    if not same:
        raise AssertionError(f"{message} (got {actual!r}{where}, expected {expected!r})")


def _compare_tensors(actual, expected, message, where, rtol, atol):
    assert_close = _capture_torch()
    if tuple(actual.shape) != tuple(expected.shape):
        raise AssertionError(
            f"{message} (shape {tuple(actual.shape)}{where}, expected {tuple(expected.shape)})"
        )
    if actual.dtype != expected.dtype:
        raise AssertionError(f"{message} (dtype {actual.dtype}{where}, expected {expected.dtype})")
    try:
        assert_close(actual.detach(), expected.detach(), rtol=rtol, atol=atol)
    except AssertionError:
        raise AssertionError(f"{message}" + (f" (at {where.strip()})" if where else "")) from None


def _torch():
    import sys

    return sys.modules.get("torch")


def _capture_torch():
    """Return (and remember) the genuine ``torch.testing.assert_close``."""
    global _assert_close
    if _assert_close is None:
        from torch.testing import assert_close

        _assert_close = assert_close
    return _assert_close


# Set while a notebook is graded: by the kernel-side harness (run the learner's half and hand the
# results to the grader) and by the grader (collect the check half). Neither is set otherwise.
_PROBE = None
_COLLECT = None
_FAILURES: list | None = None  # soft failures of the check running now (see soft())
_SUSPECTS: list = []  # values converted by to_data whose comparisons always agree (the harness reads it)


@contextlib.contextmanager
def soft():
    """One independent check of a hidden test's ``check``: its failure is listed, the rest still run.

    Inside :func:`run_check` (the grader, and :func:`hidden_test` outside it) an
    ``AssertionError`` raised in the block is recorded and execution continues after the block;
    every recorded message becomes feedback. Used anywhere else, the error propagates as usual.

    Example:
        >>> failures = run_check(lambda got, seed: [_soft_demo(got)], 1, 0)
        >>> failures
        ['first is wrong', 'second is wrong']
    """
    try:
        yield
    except AssertionError as exc:
        if _FAILURES is None:
            raise
        _record(str(exc))


def expect(condition, message: str) -> None:
    """Soft ``assert condition, message``: listed with the others instead of stopping the check.

    Args:
        condition: what must hold (its truth value is taken).
        message: the likely mistake, as in :func:`close`.

    Raises:
        AssertionError: outside :func:`run_check`, when ``condition`` is false.
    """
    if not condition:
        if _FAILURES is None:
            raise AssertionError(message)
        _record(message)


def _soft_demo(got):
    with soft():
        close(got, 2, "first is wrong")
    expect(got == 3, "second is wrong")


def _record(message: str) -> None:
    if message not in _FAILURES and len(_FAILURES) < _MAX_FAILURES:
        _FAILURES.append(message)


def run_check(check, got, seed) -> list[str]:
    """Run one ``check(got, seed)`` and return every failure message (empty when it passes).

    Failures of :func:`soft` blocks and :func:`expect` calls are collected; a plain
    ``AssertionError`` ends the check and is the last message. Other exceptions propagate.
    """
    global _FAILURES
    previous, _FAILURES = _FAILURES, []
    try:
        try:
            check(got, seed)
        except AssertionError as exc:
            _record(str(exc))
        return list(_FAILURES)
    finally:
        _FAILURES = previous


def hidden_test(run, check, *, seeds=(0, 1), block=()) -> None:
    """Declare a hidden test: ``run`` in the learner's kernel, ``check`` in the grader.

    Args:
        run: ``run(seed) -> data``: builds the hidden input for ``seed``, calls the learner's
            function(s) and returns what came out (anything :func:`to_data` converts). The
            companion, and everything in ``block``, raises :class:`ReferenceCallError` while it
            runs. It must not call the companion itself.
        check: ``check(got, seed)``: rebuilds the same input, computes the reference and raises
            ``AssertionError`` with the likely mistake when ``got`` (the converted data) differs.
        seeds: at least two distinct hidden inputs, so that a value copied from a feedback
            message cannot pass.
        block: further references to switch off while ``run`` runs (functions, classes,
            "module:qualname" or module names), besides :data:`DEFAULT_REFERENCES`.

    Raises:
        TypeError, ValueError: if ``run``/``check`` are not callables or fewer than two distinct
            seeds are given.
        AssertionError: outside the grader, when ``check`` finds a difference (every distinct
            failure of every seed, joined by " | ").

    Example:
        >>> def _run(seed):
        ...     return {"twice": 2 * seed}
        >>> def _check(got, seed):
        ...     close(got["twice"], seed + seed, "doubling is wrong")
        >>> hidden_test(_run, _check, seeds=(1, 2))
    """
    if not callable(run) or not callable(check):
        raise TypeError("hidden_test(run, check): both must be functions")
    seeds = tuple(seeds)
    if len(seeds) < 2 or len(set(map(repr, seeds))) != len(seeds):
        raise ValueError(f"hidden_test(): give at least two distinct seeds, got {seeds!r}")
    if _COLLECT is not None:
        _COLLECT(run, check, seeds, tuple(block))
        return
    if _PROBE is not None:
        _PROBE(run, seeds, tuple(block))
        return
    failures: list[str] = []
    for seed in seeds:
        with reference_unavailable(*_default_targets(), *block):
            got = to_data(run(seed))
        failures += [m for m in run_check(check, got, seed) if m not in failures]
    if failures:
        raise AssertionError(" | ".join(failures))


def to_data(value, _depth: int = 0):
    """Plain data from a learner's result: what may cross from the kernel to the grader.

    Python numbers, strings and None are kept; NumPy integer and floating scalars become Python
    ints and floats; tensors (parameters and subclasses too) become plain detached CPU tensors;
    dicts (state dicts included), lists and tuples are converted item by item. Anything else
    becomes ``{OBJECT_KEY: "its type name"}``, which :func:`close` reports as a wrong type.

    Example:
        >>> to_data({"loss": 0.5, "steps": (1, 2)})
        {'loss': 0.5, 'steps': (1, 2)}
        >>> to_data(object())
        {'__autograder_object__': 'object'}
    """
    t = type(value)
    if value is None or t in (bool, int, float, str):
        return value
    if _depth > _MAX_DEPTH:
        return {OBJECT_KEY: f"{t.__name__} nested too deeply"}
    if _is_numpy_number(value):
        return int(value) if "int" in t.__name__ else float(value)
    torch = _torch()
    if torch is not None and isinstance(value, torch.Tensor):
        if t not in (torch.Tensor, torch.nn.Parameter):
            if _overrides_comparisons(t):
                _suspect(f"a tensor subclass ({t.__qualname__})")
            else:
                said = sorted(_redefined(t, _DESCRIPTIONS))
                if said:
                    _suspect(f"a tensor subclass ({t.__qualname__}) that redefines {said[0]}")
        tensor = value.detach()
        if type(tensor) is not torch.Tensor:
            tensor = torch.Tensor._make_subclass(torch.Tensor, tensor)
        return tensor.to("cpu", copy=True)
    if isinstance(value, dict):
        return {
            (key if type(key) in (str, int) else repr(key)): to_data(item, _depth + 1)
            for key, item in dict.items(value)
        }
    if isinstance(value, (list, tuple)):
        items = [
            to_data(item, _depth + 1)
            for item in (
                tuple.__iter__(value) if isinstance(value, tuple) else list.__iter__(value)
            )
        ]
        return tuple(items) if isinstance(value, tuple) else items
    module = t.__module__
    name = t.__qualname__ if module in ("builtins", "__main__") else f"{module}.{t.__qualname__}"
    if _agrees_with_anything(value):
        base = next((b.__name__ for b in t.__mro__ if b.__module__ == "builtins"), "object")
        what = f"an object of type {name}" if base == "object" else f"a {base} subclass ({name})"
        _suspect(what)
    return {OBJECT_KEY: name}


def _overrides_comparisons(t) -> bool:
    return bool(_redefined(t, _COMPARISONS))


def _redefined(t, names: frozenset) -> set[str]:
    """Which of ``names`` a class defined outside builtins, torch and NumPy redefines."""
    found: set[str] = set()
    for base in t.__mro__:
        if str(base.__module__).split(".")[0] in ("builtins", "torch", "numpy"):
            continue
        found |= names & set(vars(base))
    return found


class _Nothing:
    """Equal to nothing: a value that says it equals this says so of anything."""


def _agrees_with_anything(value) -> bool:
    if not _overrides_comparisons(type(value)):
        return False
    try:
        other = _Nothing()
        return bool(value == other) or not bool(value != other)
    except Exception:  # comparisons that raise do not agree with anything
        return False


def _suspect(what: str) -> None:
    if what not in _SUSPECTS and len(_SUSPECTS) < 5:
        _SUSPECTS.append(what)


@contextlib.contextmanager
def reference_unavailable(*references):
    """Make reference implementations raise :class:`ReferenceCallError` inside the block.

    The functions' ``__code__`` is swapped (for a class, the code of every method it defines; for
    a module or package, the code of every function and class defined in it, private helpers
    included), so the block catches calls made under any name: ``from companion import evaluate
    as ev``, a bound method, a subclass calling ``super().__init__()``, ``companion.loop._helper``.
    Everything is restored on exit, even when the block raises or is interrupted.

    Args:
        *references: functions, classes, ``"module:qualname"`` strings or module names to block.
            None given: :data:`DEFAULT_REFERENCES` (the whole companion), skipping what does not
            exist.

    Raises:
        TypeError: if a reference is not a Python function, a class or a string.
        ValueError: if an explicitly given name cannot be found.

    Example:
        >>> import statistics
        >>> with reference_unavailable(statistics.fmean):
        ...     statistics.fmean([1.0, 2.0])
        Traceback (most recent call last):
        autograder.checks.ReferenceCallError: statistics.fmean is the reference ...
    """
    if references:
        targets = [_resolve(ref, strict=True) for ref in references]
    else:
        targets = _default_targets()
    swaps = []
    for function, name in reference_functions(*targets):
        swaps.append((function, function.__code__, _blocked(function, name)))
    try:
        for function, _, blocked in swaps:
            function.__code__ = blocked
        yield
    finally:
        for function, original, _ in reversed(swaps):
            function.__code__ = original


def _default_targets() -> list:
    return [t for t in (_resolve(r, strict=False) for r in DEFAULT_REFERENCES) if t is not None]


def reference_functions(*targets) -> list:
    """Every (function, qualified name) that blocking ``targets`` swaps, without duplicates.

    Args:
        *targets: functions, methods, classes or modules (a package covers its loaded submodules).
    """
    found, seen = [], set()
    for target in targets:
        for function, name in _functions_of(target):
            if id(function) not in seen:
                seen.add(id(function))
                found.append((function, name))
    return found


def _resolve(reference, *, strict: bool):
    if isinstance(reference, str):
        module_name, _, qualname = reference.partition(":")
        try:
            obj = importlib.import_module(module_name)
            for part in qualname.split(".") if qualname else ():
                obj = getattr(obj, part)
        except (ImportError, AttributeError):
            if strict:
                raise ValueError(
                    f"reference_unavailable(): cannot find {reference!r}; give 'module:qualname' "
                    "of an existing function or class, a module name, or the object itself"
                ) from None
            return None
        return obj
    if isinstance(reference, (types.FunctionType, types.MethodType, type, types.ModuleType)):
        return reference
    raise TypeError(
        "reference_unavailable(): expected functions, classes, modules or 'module:qualname' "
        f"strings, got {type(reference).__name__} ({reference!r})"
    )


def _functions_of(target) -> list:
    if isinstance(target, types.MethodType):
        target = target.__func__
    if isinstance(target, types.FunctionType):
        return [(target, f"{target.__module__}.{target.__qualname__}")]
    if isinstance(target, types.ModuleType):
        found = []
        prefix = target.__name__ + "."
        modules = [target] + [
            m
            for name, m in sorted(sys.modules.items())
            if name.startswith(prefix) and isinstance(m, types.ModuleType)
        ]
        for module in modules:
            for value in list(vars(module).values()):
                owner = getattr(value, "__module__", None)
                if owner != module.__name__:
                    continue
                if isinstance(value, types.FunctionType):
                    found.append((value, f"{owner}.{value.__qualname__}"))
                elif isinstance(value, type):
                    found.extend(_functions_of(value))
        return found
    found = []
    for attr, value in vars(target).items():
        if isinstance(value, property):
            candidates = [value.fget, value.fset, value.fdel]
        else:
            candidates = [getattr(value, "__func__", value)]
        for item in candidates:
            if isinstance(item, types.FunctionType):
                found.append((item, f"{target.__module__}.{target.__qualname__}.{attr}"))
    return found


_BLOCKED_CACHE: dict = {}
_REFERENCE_CALLS: list = []  # names of blocked references that were called (read by the harness)


def _blocked_call(name: str, message: str):
    if name not in _REFERENCE_CALLS and len(_REFERENCE_CALLS) < 5:
        _REFERENCE_CALLS.append(name)
    raise ReferenceCallError(message)


def _blocked(function, name: str) -> types.CodeType:
    key = (name, function.__code__.co_freevars)
    code = _BLOCKED_CACHE.get(key)
    if code is None:
        code = _BLOCKED_CACHE[key] = _blocked_code(function, name)
    return code


def _blocked_code(function, name: str) -> types.CodeType:
    """Code that raises ReferenceCallError, with the same free variables as ``function``."""
    freevars = function.__code__.co_freevars
    message = (
        f"{name} is the reference implementation: the exercise must be implemented in your own "
        "code, not delegated to the companion"
    )
    body = "".join(f"    {v} = None\n" for v in freevars)
    uses = f"        ({', '.join(freevars)},)\n" if freevars else ""
    source = (
        "def _outer():\n"
        f"{body}"
        "    def _blocked(*__autograder_args, **__autograder_kwargs):\n"
        f"{uses}"
        "        __import__('autograder.checks', fromlist=['_'])._blocked_call(\n"
        f"            {name!r}, {message!r})\n"
        "    return _blocked\n"
    )
    namespace: dict = {}
    exec(compile(source, f"<blocked {name}>", "exec"), namespace)
    blocked = namespace["_outer"]().__code__
    return blocked.replace(co_freevars=freevars) if freevars else blocked
