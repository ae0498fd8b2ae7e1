"""How a hidden test's results cross from the learner's kernel to the grader: as data only.

The kernel writes plain data (see :func:`autograder.checks.to_data`) with :func:`dump`: a
``torch.save`` file when torch is loaded there, else JSON with tagged dicts and tuples. The grader
reads it back with :func:`load`, which only ever calls ``torch.load(weights_only=True)`` or
``json.loads``: nothing in the file can run code in the grader's process.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

__all__ = ["MAX_BYTES", "TransportError", "dump", "load"]

MAX_BYTES = 64 * 2**20
_DICT, _TUPLE, _FLOAT = "__autograder_dict__", "__autograder_tuple__", "__autograder_float__"


class TransportError(ValueError):
    """A results file is missing, too large, or not data this module wrote."""


def dump(data, base: str) -> str:
    """Write ``data`` next to ``base`` (``base + ".pt"`` or ``".json"``); returns the path."""
    torch = sys.modules.get("torch")
    if torch is not None:
        path = base + ".pt"
        torch.save(data, path)
    else:
        path = base + ".json"
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(_encode(data), handle, allow_nan=False)
    return path


def load(base: str | os.PathLike):
    """Read what :func:`dump` wrote at ``base``.

    Raises:
        TransportError: when no file is there, it is larger than :data:`MAX_BYTES`, or it does
            not hold plain data (a forged or damaged file).
    """
    base = str(base)
    for path in (Path(base + ".pt"), Path(base + ".json")):
        if not path.is_file():
            continue
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise TransportError(f"the results file is {size / 2**20:.0f} MB, over the limit")
        try:
            if path.suffix == ".pt":
                import warnings

                import torch

                with warnings.catch_warnings():  # a forged file may make torch warn first
                    warnings.simplefilter("ignore")
                    return torch.load(path, weights_only=True, map_location="cpu")
            return _decode(json.loads(path.read_text(encoding="utf-8")))
        except Exception as exc:  # anything unreadable was not written by the harness
            raise TransportError(
                f"the results file could not be read as data ({type(exc).__name__})"
            ) from None
    raise TransportError("no results file was written")


def _encode(value):
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return {_FLOAT: repr(value)}
    if isinstance(value, dict):
        return {_DICT: [[_encode(k), _encode(v)] for k, v in value.items()]}
    if isinstance(value, tuple):
        return {_TUPLE: [_encode(v) for v in value]}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    return value


def _decode(value):
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if isinstance(value, dict):
        if set(value) == {_DICT}:
            return {_decode(k): _decode(v) for k, v in value[_DICT]}
        if set(value) == {_TUPLE}:
            return tuple(_decode(v) for v in value[_TUPLE])
        if set(value) == {_FLOAT}:
            return float(value[_FLOAT])
        raise ValueError("an untagged object")
    if value is None or type(value) in (bool, int, float, str):
        return value
    raise ValueError(f"unexpected {type(value).__name__}")
