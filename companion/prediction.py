"""``predict``: the model's outputs over a whole loader, in order, in one call."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import torch
from torch import nn

from companion._loop_checks import check_loader, check_model
from companion.amp import autocast, check_amp
from companion.batches import check_batch_fn, check_model_device, forward, model_device, move_to

__all__ = ["predict"]


def _inputs(batch, index: int, batch_fn):
    if batch_fn is not None:
        pair = batch_fn(batch)
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
            raise TypeError(
                f"batch_fn must return an (inputs, targets) pair (targets may be None), but "
                f"for batch {index + 1} it returned a {type(pair).__name__}"
            )
        return pair[0]
    if isinstance(batch, torch.Tensor):
        return batch
    if isinstance(batch, (tuple, list)) and len(batch) in (1, 2):
        return batch[0]  # (inputs,) from a TensorDataset of inputs, or (inputs, targets)
    raise TypeError(
        f"predict reads a batch as inputs, (inputs,) or (inputs, targets), but batch "
        f"{index + 1} is a {type(batch).__name__}"
        + (f" of length {len(batch)}" if isinstance(batch, (tuple, list)) else "")
        + "; pass batch_fn=lambda b: (inputs_of(b), None)"
    )


def _cat(parts: list):
    first = parts[0]
    if isinstance(first, torch.Tensor):
        return torch.cat(parts)
    if isinstance(first, (tuple, list)):
        return type(first)(_cat([p[i] for p in parts]) for i in range(len(first)))
    if isinstance(first, Mapping):
        return {k: _cat([p[k] for p in parts]) for k in first}
    raise TypeError(
        f"predict concatenates tensors (or tuples and dicts of them), but the model returned "
        f"a {type(first).__name__}"
    )


def predict(
    model: nn.Module,
    loader,
    *,
    device: str | torch.device = "auto",
    batch_fn: Callable | None = None,
    amp: str | None = None,
) -> torch.Tensor | tuple | dict:
    """The model's outputs for every batch of ``loader``, concatenated in order, on the CPU.

    Runs in eval mode under ``torch.inference_mode()`` and restores every submodule's mode.
    Shuffle nothing you want to line up with: the order is the loader's.

    Args:
        model: the model (it stays where it is).
        loader: yields input tensors, ``(inputs,)`` or ``(inputs, targets)`` (targets are
            ignored); anything else through ``batch_fn``.
        device: where the batches go; ``"auto"``: where the model's parameters are.
        batch_fn: ``batch_fn(batch) -> (inputs, targets)`` as in ``fit`` (targets may be None).
        amp: optional autocast (None, "bf16", "fp16").

    Returns:
        One tensor ``(N, ...)`` over the N samples, or a tuple or dict of them if the model
        returns one.

    Raises:
        TypeError: a batch or an output of a kind predict cannot read or concatenate.
        ValueError: the loader yielded no batches.

    Example:
        >>> model = nn.Linear(4, 3)
        >>> data = [(torch.randn(5, 4), torch.zeros(5)), (torch.randn(2, 4), torch.zeros(2))]
        >>> predict(model, data).shape
        torch.Size([7, 3])
    """
    device = model_device(model, device)
    check_model(model)
    check_amp(amp)
    check_loader(loader, "loader")
    check_batch_fn(batch_fn)
    check_model_device(model, device)
    modes = {m: m.training for m in model.modules()}
    parts = []
    model.eval()
    try:
        with torch.inference_mode():
            for i, batch in enumerate(loader):
                inputs = move_to(_inputs(batch, i, batch_fn), device, False)
                with autocast(device, amp):
                    outputs = forward(model, inputs)
                parts.append(move_to(outputs, torch.device("cpu"), False))
    finally:
        for module, mode in modes.items():
            module.train(mode)
    if not parts:
        raise ValueError("the loader yielded no batches; is the dataset empty?")
    return _cat(parts)
