"""Argument checks shared by the data modules; each message names the argument and value."""

from __future__ import annotations

from typing import Any

import numpy as np


def check_int(name: str, value: Any, *, minimum: int, hint: str = "") -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int >= {minimum}, got {value!r}.{hint}")
    if value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}.{hint}")
    return int(value)


def check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {value!r}.")
    return value
