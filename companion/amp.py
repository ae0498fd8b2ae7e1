"""Mixed precision with ``torch.amp``: one place that turns ``amp="bf16"`` into the right tools.

In older code you will see ``torch.cuda.amp.autocast()`` and ``torch.cuda.amp.GradScaler()``;
the current forms are ``torch.autocast("cuda", dtype=...)`` and ``torch.amp.GradScaler("cuda")``.
"""

from __future__ import annotations

import contextlib

import torch

__all__ = ["AMP_DTYPES", "autocast", "make_scaler", "check_amp"]

AMP_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


def check_amp(amp: str | None) -> str | None:
    """Validate an ``amp`` argument: ``None``, ``"bf16"`` or ``"fp16"``.

    Raises:
        ValueError: for any other value, naming the accepted ones.
    """
    if amp is None or (isinstance(amp, str) and amp in AMP_DTYPES):
        return amp
    raise ValueError(
        f"amp must be None, 'bf16' or 'fp16', got {amp!r}. "
        f"Use 'bf16' where the hardware supports it (no scaler needed), 'fp16' with a GradScaler."
    )


def autocast(device: torch.device | str, amp: str | None):
    """The autocast context for ``amp`` on ``device`` (a no-op context when ``amp`` is None).

    Wrap the forward pass and the loss only; ``backward()`` and ``optimizer.step()`` stay outside.

    Example:
        >>> with autocast("cpu", "bf16"):
        ...     y = torch.nn.Linear(4, 2)(torch.randn(3, 4))
        >>> y.dtype
        torch.bfloat16
    """
    check_amp(amp)
    if amp is None:
        return contextlib.nullcontext()
    device_type = torch.device(device).type
    return torch.autocast(device_type=device_type, dtype=AMP_DTYPES[amp])


def make_scaler(device: torch.device | str, amp: str | None) -> torch.amp.GradScaler | None:
    """A ``torch.amp.GradScaler`` when ``amp == "fp16"``, else None (bf16 and fp32 need none).

    fp16 has a narrow exponent range: small gradients underflow to zero unless the loss is
    scaled up before ``backward()``; the scaler does that and skips steps whose gradients
    overflowed.

    Example:
        >>> make_scaler("cpu", "fp16") is not None, make_scaler("cpu", "bf16")
        (True, None)
    """
    check_amp(amp)
    if amp != "fp16":
        return None
    return torch.amp.GradScaler(torch.device(device).type)
