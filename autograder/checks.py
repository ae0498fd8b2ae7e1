"""Helpers for the hidden tests of the course notebooks (importable in the learner's kernel).

- :func:`close` compares a learner's result with the reference's, refusing objects that are not
  plain tensors, numbers, strings or containers of them (an object whose ``__eq__`` always says
  True gets nowhere).
- :func:`reference_unavailable` makes the companion's reference implementations raise while the
  learner's code runs, so delegating an exercise to ``companion`` earns nothing.

Typical hidden test::

    import companion
    from autograder.checks import close, reference_unavailable
    expected = companion.evaluate(model, loader, loss_fn, device="cpu")
    with reference_unavailable():
        got = evaluate(model, loader, loss_fn, "cpu")
    close(got, expected, "evaluate() differs from the reference: is the model in eval() mode?")
"""

from __future__ import annotations

import contextlib
import importlib
import math
import types

__all__ = ["DEFAULT_REFERENCES", "ReferenceCallError", "close", "reference_unavailable"]

# "module:qualname" of the reference implementations a learner must not delegate to. Names that
# do not exist (a chapter's reference not written yet) are skipped.
DEFAULT_REFERENCES = (
    "companion.loop:train_one_epoch",
    "companion.loop:evaluate",
    "companion.loop:fit",
    "companion.checkpoint:save_checkpoint",
    "companion.checkpoint:load_checkpoint",
    "companion.checkpoint:strip_prefixes",
    "companion.models:ResidualBlock",
    "companion.nn:ResidualBlock",
)
# Values from float32 computations: Python floats are compared with float32's tolerance, since
# summing the same numbers in another order legitimately moves the last bits.
_FLOAT_RTOL, _FLOAT_ATOL = 1.3e-6, 1e-5
_assert_close = None  # torch.testing.assert_close, captured before learner code can patch it


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
    if kind is None:
        raise TypeError(
            f"close(): expected value{where} of type {type(expected).__name__} cannot be "
            "compared; pass tensors, numbers, strings, None, or dicts/lists of them"
        )
    if _kind(actual) != kind and not (kind == "number" and _kind(actual) == "number"):
        raise AssertionError(
            f"{message} (got {_describe(actual)}{where} where {_describe(expected)} was expected)"
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
    if t in (int, float, bool):
        return "number"
    if t is str:
        return "str"
    if value is None:
        return "none"
    if t in (list, tuple):
        return "sequence"
    if isinstance(value, dict) and t.__module__ in ("builtins", "collections"):
        return "dict"
    torch = _torch()
    if torch is not None and t in (torch.Tensor, torch.nn.Parameter):
        return "tensor"
    return None


def _describe(value) -> str:
    kind = _kind(value)
    if kind == "tensor":
        return f"a tensor of shape {tuple(value.shape)}"
    if kind is None:
        return f"an object of type {type(value).__name__}"
    return f"a {type(value).__name__}"


def _items(value) -> list:
    return list(tuple.__iter__(value)) if type(value) is tuple else list(list.__iter__(value))


def _compare_numbers(actual, expected, message, where, rtol, atol):
    if type(expected) is bool or type(actual) is bool or type(expected) is int:
        same = type(actual) in (int, bool) and int(actual) == int(expected)
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


@contextlib.contextmanager
def reference_unavailable(*references):
    """Make reference implementations raise :class:`ReferenceCallError` inside the block.

    The functions' ``__code__`` is swapped (for a class, the code of every method it defines), so
    the block catches calls made under any name: ``from companion import evaluate as ev``, a bound
    method, a subclass calling ``super().__init__()``. Everything is restored on exit, even when the
    block raises or is interrupted.

    Args:
        *references: functions, classes or ``"module:qualname"`` strings to block. None given:
            :data:`DEFAULT_REFERENCES` (the companion's training loop, checkpoint helpers and
            residual block), skipping those that do not exist.

    Raises:
        TypeError: if a reference is not a Python function, a class or a "module:qualname" string.
        ValueError: if an explicitly given "module:qualname" cannot be found.

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
        targets = [t for t in (_resolve(r, strict=False) for r in DEFAULT_REFERENCES) if t]
    swaps = []
    for target in targets:
        for function, name in _functions_of(target):
            swaps.append((function, function.__code__, _blocked_code(function, name)))
    try:
        for function, _, blocked in swaps:
            function.__code__ = blocked
        yield
    finally:
        for function, original, _ in reversed(swaps):
            function.__code__ = original


def _resolve(reference, *, strict: bool):
    if isinstance(reference, str):
        module_name, _, qualname = reference.partition(":")
        try:
            obj = importlib.import_module(module_name)
            for part in qualname.split("."):
                obj = getattr(obj, part)
        except (ImportError, AttributeError):
            if strict:
                raise ValueError(
                    f"reference_unavailable(): cannot find {reference!r}; give 'module:qualname' "
                    "of an existing function or class, or the object itself"
                ) from None
            return None
        return obj
    if isinstance(reference, (types.FunctionType, types.MethodType, type)):
        return reference
    raise TypeError(
        "reference_unavailable(): expected functions, classes or 'module:qualname' strings, got "
        f"{type(reference).__name__} ({reference!r})"
    )


def _functions_of(target) -> list:
    if isinstance(target, types.MethodType):
        target = target.__func__
    if isinstance(target, types.FunctionType):
        return [(target, f"{target.__module__}.{target.__qualname__}")]
    found = []
    for attr, value in vars(target).items():
        value = getattr(value, "__func__", value)
        if isinstance(value, types.FunctionType):
            found.append((value, f"{target.__module__}.{target.__qualname__}.{attr}"))
    return found


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
        "        raise __import__('autograder.checks', fromlist=['_']).ReferenceCallError(\n"
        f"            {message!r})\n"
        "    return _blocked\n"
    )
    namespace: dict = {}
    exec(compile(source, f"<blocked {name}>", "exec"), namespace)
    blocked = namespace["_outer"]().__code__
    return blocked.replace(co_freevars=freevars) if freevars else blocked
