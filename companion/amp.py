"""Mixed precision with ``torch.amp``: one place that turns ``amp="bf16"`` into the right tools.

``amp_step`` is one optimizer step with autocast and a scaler, ``clip_and_step`` clips the
true (unscaled) gradients before the step: the references of chapter 7.

In older code you will see ``torch.cuda.amp.autocast()`` and ``torch.cuda.amp.GradScaler()``;
the current forms are ``torch.autocast("cuda", dtype=...)`` and ``torch.amp.GradScaler("cuda")``.
"""

from __future__ import annotations

import contextlib

import torch

__all__ = ["AMP_DTYPES", "amp_step", "autocast", "check_amp", "clip_and_step", "make_scaler"]

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

    Args:
        device: the device the forward pass runs on (a ``torch.device`` or a string such as
            ``"cuda"``); its type picks the autocast backend.
        amp: ``"bf16"`` or ``"fp16"`` for the precision operations may drop to, or None for
            full precision (the context then does nothing).

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

    Args:
        device: the device training runs on; the scaler is built for its type.
        amp: the mixed-precision mode of the run: only ``"fp16"`` gets a scaler; ``"bf16"``
            and None return None.

    Example:
        >>> make_scaler("cpu", "fp16") is not None, make_scaler("cpu", "bf16")
        (True, None)
    """
    check_amp(amp)
    if amp != "fp16":
        return None
    return torch.amp.GradScaler(torch.device(device).type)


def _check_amp_dtype(dtype) -> torch.dtype:
    if dtype not in (torch.float16, torch.bfloat16):
        raise ValueError(
            f"dtype must be torch.float16 or torch.bfloat16, got {dtype!r}. "
            "Autocast runs chosen operations in one of these half-precision types."
        )
    return dtype


def _check_scaler(scaler, dtype: torch.dtype) -> None:
    if scaler is not None and not isinstance(scaler, torch.amp.GradScaler):
        raise TypeError(
            f"scaler must be a torch.amp.GradScaler or None, got {type(scaler).__name__}. "
            "Create one per run with torch.amp.GradScaler(device_type)."
        )
    if scaler is None and dtype == torch.float16:
        raise ValueError(
            "dtype=torch.float16 needs a GradScaler (scaler=None was given): fp16 gradients "
            "underflow to zero without loss scaling. Pass torch.amp.GradScaler(device_type), or "
            "use torch.bfloat16, which needs none."
        )


def amp_step(
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    loss_fn,
    inputs: torch.Tensor,
    targets: torch.Tensor,
    scaler: torch.amp.GradScaler | None,
    device_type: str,
    dtype: torch.dtype,
) -> float:
    """One optimizer step on one batch with mixed precision (``torch.amp``).

    Gradients left from before are cleared. ``torch.autocast(device_type, dtype)`` covers the
    forward pass and the loss only; ``backward()`` and the optimizer step run outside it. With a
    scaler, the loss is scaled before ``backward()``, ``scaler.step`` takes the step (and skips it
    when the gradients hold inf or NaN), and ``scaler.update()`` adapts the scale after every
    step, skipped ones included. Without a scaler (bf16, whose range is float32's), the step is
    a plain ``backward()`` and ``optimizer.step()``.

    Args:
        model: the model, on the device the batch is on.
        optimizer: an optimizer over ``model``'s parameters.
        loss_fn: the loss of a batch, e.g. ``nn.CrossEntropyLoss()``.
        inputs: the batch's inputs, passed as ``model(inputs)``.
        targets: the batch's targets.
        scaler: a ``torch.amp.GradScaler`` (required for float16), or None.
        device_type: ``"cuda"``, ``"cpu"``, ``"mps"``...: where autocast applies.
        dtype: ``torch.float16`` or ``torch.bfloat16``.

    Returns:
        The batch's loss as a Python float, unscaled (inf or NaN when the forward pass
        overflowed; the scaler then skips the step).

    Raises:
        TypeError: ``scaler`` is neither a GradScaler nor None.
        ValueError: ``dtype`` is not a half-precision type, or float16 without a scaler.

    Example:
        >>> model = torch.nn.Linear(4, 2)
        >>> optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        >>> x, y = torch.randn(8, 4), torch.randint(0, 2, (8,))
        >>> loss = amp_step(model, optimizer, torch.nn.CrossEntropyLoss(), x, y,
        ...                 torch.amp.GradScaler("cpu"), "cpu", torch.float16)
    """
    _check_amp_dtype(dtype)
    _check_scaler(scaler, dtype)
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(device_type=device_type, dtype=dtype):  # forward and loss only
        loss = loss_fn(model(inputs), targets)
    if scaler is None:
        loss.backward()
        optimizer.step()
    else:
        scaler.scale(loss).backward()  # a larger loss: small fp16 gradients do not flush to 0
        scaler.step(optimizer)  # unscales, then steps unless a gradient is inf/NaN
        scaler.update()  # every step: halve after an overflow, grow after a quiet stretch
    return loss.item()


def clip_and_step(
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    scaler: torch.amp.GradScaler | None,
    max_norm: float,
) -> float:
    """Clip the gradients of ``model`` to a total norm of ``max_norm``, then take the step.

    Call it after ``backward()`` of the loss, scaled by ``scaler`` when there is one. The norm
    that is measured and clipped is the norm of the true gradients: ``scaler.unscale_`` divides
    them by the scale first (they are otherwise ``scale`` times too large, and the clip would
    shrink them by that factor). The step then goes through the scaler, which skips it when a
    gradient is inf or NaN, and the scale is updated. Without a scaler nothing skips such a step
    for you (``optimizer.step()`` would write inf or NaN into the weights): the step is taken only
    when the measured norm is finite.

    Args:
        model: the model whose parameters' ``.grad`` hold the (scaled) gradients.
        optimizer: the optimizer over ``model``'s parameters.
        scaler: the ``torch.amp.GradScaler`` that scaled the loss, or None.
        max_norm: the largest total (2-)norm the gradients may have, > 0.

    Returns:
        The total norm of the true gradients before clipping, as a Python float (inf or NaN
        when a gradient held inf or NaN and the step was skipped, with a scaler or without).

    Raises:
        TypeError: ``scaler`` is neither a GradScaler nor None, or ``max_norm`` is not a number.
        ValueError: ``max_norm`` is not positive.

    Example:
        >>> model = torch.nn.Linear(4, 2)
        >>> optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        >>> scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
        >>> scaler.scale(model(torch.randn(8, 4)).pow(2).mean()).backward()
        >>> norm = clip_and_step(model, optimizer, scaler, max_norm=1.0)
    """
    _check_scaler(scaler, torch.bfloat16)
    if isinstance(max_norm, bool) or not isinstance(max_norm, (int, float)):
        raise TypeError(f"max_norm must be a positive number, got {max_norm!r}")
    if not max_norm > 0:
        raise ValueError(f"max_norm must be > 0, got {max_norm!r}")
    if scaler is not None:
        scaler.unscale_(optimizer)  # the true gradients, so that max_norm means what it says
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    if scaler is None:
        if torch.isfinite(norm):  # no scaler checks the gradients here: an inf one would stick
            optimizer.step()
    else:
        scaler.step(optimizer)  # already unscaled: steps unless a gradient is inf/NaN
        scaler.update()
    return norm.item()
