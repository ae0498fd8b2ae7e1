"""Batches: how the training loop, prediction and the smoke test read and move them.

One module for what every part of companion that consumes a loader needs: split a batch into
``(inputs, targets)``, move it to a device, call the model on it, count its samples, and find
the device a model lives on. The loop (:mod:`companion.loop`), :func:`companion.predict` and
:func:`companion.smoke_test` import these by name; none is part of ``companion``'s public API.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch
from torch import nn

from companion.device import pick_device


def model_device(model, device) -> torch.device:
    """``"auto"`` for a function that leaves the model where it is: the model's own device."""
    if isinstance(device, str) and device == "auto" and isinstance(model, nn.Module):
        tensor = next(model.parameters(), None)
        if tensor is None:
            tensor = next(model.buffers(), None)
        return tensor.device if tensor is not None else torch.device("cpu")
    return pick_device(device)


def check_model_device(model: nn.Module, device: torch.device) -> None:
    """Refuse a model whose parameters sit on another kind of device than ``device``."""
    param = next(model.parameters(), None)
    if param is not None and param.device.type != device.type:
        raise ValueError(
            f"the model is on {param.device} but device={str(device)!r}; move it once with "
            f"model.to(device) before training (fit does this for you)"
        )


def check_batch_fn(batch_fn) -> None:
    """Refuse a ``batch_fn`` that is not callable, with an example of one."""
    if batch_fn is not None and not callable(batch_fn):
        raise TypeError(
            f"batch_fn must be a function batch -> (inputs, targets), got "
            f"{type(batch_fn).__name__}; e.g. batch_fn=lambda b: (b['x'], b['y'])"
        )


def split_batch(batch, epoch: int, batch_index: int, batch_fn=None):
    """``(inputs, targets)`` of one batch: the batch itself, or what ``batch_fn`` makes of it."""
    pair = batch if batch_fn is None else batch_fn(batch)
    if isinstance(pair, (tuple, list)) and len(pair) == 2:
        return pair
    what = f"a {type(pair).__name__}"
    if isinstance(pair, (tuple, list)):
        what += f" of length {len(pair)}"
    where = f"in epoch {epoch + 1} batch {batch_index + 1}"
    if batch_fn is not None:
        raise TypeError(
            f"batch_fn must return an (inputs, targets) pair, but {where} it returned {what}"
        )
    fix = "Make the dataset's __getitem__ return (input, target), or pass batch_fn"
    if isinstance(batch, Mapping):
        keys = list(batch)
        fix = (
            f"Pass batch_fn to pick them from the dict, e.g. "
            f"batch_fn=lambda b: (b[{keys[0]!r}], b[{keys[-1]!r}])"
        )
    raise TypeError(
        f"the loader must yield (inputs, targets) pairs, but {where} it yielded {what}. {fix}."
    )


def inputs_and_targets(batch, index: int, batch_fn, who: str):
    """``(inputs, targets)`` of a batch to run the model on; targets None when it carries none.

    Reads inputs, ``(inputs,)`` or ``(inputs, targets)``, or what ``batch_fn`` returns; ``who``
    (``"predict"``, ``"verify_onnx"``) names the caller in errors.
    """
    if batch_fn is not None:
        pair = batch_fn(batch)
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
            raise TypeError(
                f"batch_fn must return an (inputs, targets) pair (targets may be None), but "
                f"for batch {index + 1} it returned a {type(pair).__name__}"
            )
        return pair[0], pair[1]
    if isinstance(batch, torch.Tensor):
        return batch, None
    if isinstance(batch, (tuple, list)) and len(batch) in (1, 2):
        # (inputs,) from a TensorDataset of inputs, or (inputs, targets)
        return batch[0], (batch[1] if len(batch) == 2 else None)
    raise TypeError(
        f"{who} reads a batch as inputs, (inputs,) or (inputs, targets), but batch "
        f"{index + 1} is a {type(batch).__name__}"
        + (f" of length {len(batch)}" if isinstance(batch, (tuple, list)) else "")
        + "; pass batch_fn=lambda b: (inputs_of(b), targets_of(b) or None)"
    )


def move_to(obj, device: torch.device, non_blocking: bool):
    """``obj`` on ``device``: a tensor, or the tensors inside lists, tuples and dicts."""
    if isinstance(obj, torch.Tensor):
        return obj if obj.device == device else obj.to(device, non_blocking=non_blocking)
    if isinstance(obj, (list, tuple)):
        return type(obj)(move_to(o, device, non_blocking) for o in obj)
    if isinstance(obj, Mapping):
        return {k: move_to(v, device, non_blocking) for k, v in obj.items()}
    return obj


def forward(model: nn.Module, inputs):
    """``model(inputs)``: a tuple or list is spread as arguments, a dict as keyword arguments."""
    if isinstance(inputs, torch.Tensor):
        return model(inputs)
    if isinstance(inputs, (tuple, list)):
        return model(*inputs)
    if isinstance(inputs, Mapping):
        return model(**inputs)
    return model(inputs)


def count_samples(inputs, targets) -> int:
    """Samples in a batch: the first dimension of the first tensor in targets, then inputs."""
    if isinstance(targets, torch.Tensor):
        return targets.shape[0] if targets.dim() else 1
    t = first_tensor(targets)
    t = t if t is not None else first_tensor(inputs)
    if t is not None:
        return t.shape[0] if t.dim() else 1
    return len(targets)


def first_tensor(obj) -> torch.Tensor | None:
    """The first tensor in ``obj`` (a tensor, or nested lists, tuples and dicts), or None."""
    if isinstance(obj, torch.Tensor):
        return obj
    items = obj.values() if isinstance(obj, Mapping) else obj
    if isinstance(items, (tuple, list)) or isinstance(obj, Mapping):
        for item in items:
            found = first_tensor(item)
            if found is not None:
                return found
    return None
