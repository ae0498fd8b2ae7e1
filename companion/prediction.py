"""``predict``: the model's outputs over a whole loader, in order, in one call."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import torch
from torch import nn

from companion._loop_checks import check_loader, check_model
from companion.amp import autocast, check_amp
from companion.batches import (
    check_batch_fn,
    check_model_device,
    forward,
    inputs_and_targets,
    model_device,
    move_to,
)

__all__ = ["predict"]


def _cat(parts: list, what: str = "the model returned"):
    first = parts[0]
    if isinstance(first, torch.Tensor):
        for i, part in enumerate(parts[1:], start=2):
            if isinstance(part, torch.Tensor) and part.shape[1:] != first.shape[1:]:
                raise ValueError(
                    f"predict concatenates along the first axis, but {what} shape "
                    f"{tuple(first.shape)} for batch 1 and {tuple(part.shape)} for batch {i}: "
                    f"the other axes differ (sequences padded per batch?). Pad every batch to "
                    f"one length in the collate_fn, or loop over the loader yourself and keep "
                    f"each batch's outputs with its mask."
                )
        return torch.cat(parts)
    if isinstance(first, (tuple, list)):
        return type(first)(_cat([p[i] for p in parts], what) for i in range(len(first)))
    if isinstance(first, Mapping):
        return {k: _cat([p[k] for p in parts], what) for k in first}
    raise TypeError(
        f"predict concatenates tensors (or tuples and dicts of them), but {what} "
        f"a {type(first).__name__}"
    )


def predict(
    model: nn.Module,
    loader,
    *,
    device: str | torch.device = "auto",
    batch_fn: Callable | None = None,
    amp: str | None = None,
    targets: bool = False,
) -> torch.Tensor | tuple | dict:
    """The model's outputs for every batch of ``loader``, concatenated in order, on the CPU.

    Runs in eval mode under ``torch.inference_mode()`` and restores every submodule's mode.
    Shuffle nothing you want to line up with: the order is the loader's.

    Args:
        model: the model to run; it stays on its device, in the mode it was in.
        loader: any iterable of batches (a ``DataLoader``, a list); each batch is an input
            tensor, ``(inputs,)`` or ``(inputs, targets)``, or anything ``batch_fn`` reads.
        device: where each batch's inputs are moved; ``"auto"`` means where the model's
            parameters are.
        batch_fn: ``batch_fn(batch) -> (inputs, targets)`` for other batches, as in ``fit``
            (e.g. ``lambda b: (b["x"], b["y"])`` for dicts); targets may be None when only
            outputs are wanted.
        amp: None for full precision, or ``"bf16"``/``"fp16"`` to run the forward pass under
            autocast.
        targets: also return the batches' targets, concatenated in the same order, so that
            outputs and targets line up row for row without a second pass over the loader.

    Returns:
        The outputs: one tensor ``(N, ...)`` over the N samples, or a tuple or dict of them if
        the model returns one. With ``targets=True``, the pair ``(outputs, targets)``, the
        targets concatenated the same way (a tensor, or a tuple or dict of tensors), on the
        CPU.

    Raises:
        TypeError: a batch or an output of a kind predict cannot read or concatenate.
        ValueError: the loader yielded no batches, ``targets=True`` and a batch carries no
            targets, or two batches' outputs (or targets) differ beyond the first axis.

    Example:
        >>> model = nn.Linear(4, 3)
        >>> data = [(torch.randn(5, 4), torch.zeros(5)), (torch.randn(2, 4), torch.ones(2))]
        >>> predict(model, data).shape
        torch.Size([7, 3])
        >>> outputs, targets = predict(model, data, targets=True)
        >>> targets.tolist()
        [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0]
    """
    device = model_device(model, device)
    check_model(model)
    check_amp(amp)
    check_loader(loader, "loader")
    check_batch_fn(batch_fn)
    check_model_device(model, device)
    if not isinstance(targets, bool):
        raise TypeError(f"targets must be True or False, got {targets!r}")
    modes = {m: m.training for m in model.modules()}
    parts, target_parts = [], []
    cpu = torch.device("cpu")
    model.eval()
    try:
        with torch.inference_mode():
            for i, batch in enumerate(loader):
                inputs, batch_targets = inputs_and_targets(batch, i, batch_fn, "predict")
                if targets:
                    if batch_targets is None:
                        raise ValueError(_no_targets(batch, i, batch_fn))
                    target_parts.append(move_to(batch_targets, cpu, False))
                with autocast(device, amp):
                    outputs = forward(model, move_to(inputs, device, False))
                parts.append(move_to(outputs, cpu, False))
    finally:
        for module, mode in modes.items():
            module.train(mode)
    if not parts:
        raise ValueError("the loader yielded no batches; is the dataset empty?")
    if targets:
        return _cat(parts), _cat(target_parts, "with targets=True the batches held")
    return _cat(parts)


def _no_targets(batch, index: int, batch_fn) -> str:
    what = (
        "batch_fn returned targets None"
        if batch_fn is not None
        else f"it is a {type(batch).__name__}"
        + (f" of length {len(batch)}" if isinstance(batch, (tuple, list)) else "")
    )
    return (
        f"targets=True, but batch {index + 1} carries no targets ({what}); batches must be "
        f"(inputs, targets), or pass batch_fn=lambda b: (inputs_of(b), targets_of(b)); or "
        f"call predict without targets=True"
    )
