"""Dry runs: the shape a module produces, found without computing anything.

A classifier's first ``nn.Linear`` needs ``in_features``: the number of values the conv/pool
chain before it leaves per sample. Working it out by hand is where the classic shape error comes
from; running the chain once on a dummy input gives it exactly. :func:`output_shape` does that run
on the meta device, where tensors have shapes and dtypes but no data, so it costs no memory and
no compute however large the input, and it leaves the module as it was.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn
from torch.func import functional_call

__all__ = ["output_shape"]


def _check_shape(input_shape) -> tuple[int, ...]:
    if isinstance(input_shape, torch.Size):
        input_shape = tuple(input_shape)
    if not isinstance(input_shape, Sequence) or isinstance(input_shape, str) or not input_shape:
        raise TypeError(
            f"input_shape must be a non-empty tuple of ints with the batch dimension first, "
            f"e.g. (1, 3, 32, 32); got {input_shape!r}"
        )
    for size in input_shape:
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(
                f"input_shape must hold positive ints (batch dimension first), got {input_shape!r}"
            )
    return tuple(input_shape)


def output_shape(
    module: nn.Module, input_shape: Sequence[int], *, dtype: torch.dtype = torch.float32
) -> torch.Size:
    """The shape of ``module``'s output for an input of shape ``input_shape``, by a dry run.

    The forward runs once on the meta device, with stand-ins for the module's parameters and
    buffers: nothing is computed or allocated, and the module itself is not changed (its
    weights, batch-norm statistics and device stay as they were). A module that keeps plain
    tensor attributes (not registered as buffers) cannot run on the meta device; the error
    says so.

    Typical use: the ``in_features`` of the linear layer after a conv/pool chain is
    ``math.prod(output_shape(features, (1, C, H, W))[1:])``.

    Args:
        module: the module (or chain) to measure; it must return one tensor.
        input_shape: the full input shape, batch dimension first (batch norm in train mode
            needs a batch of at least 2 for 1x1 feature maps).
        dtype: the input's dtype.

    Returns:
        The output's shape, a ``torch.Size``.

    Raises:
        TypeError: ``module`` is not an ``nn.Module``, ``input_shape`` is not a tuple of ints,
            or the module returns something other than a tensor.
        ValueError: a size in ``input_shape`` is not a positive int, or the module cannot take
            an input of that shape (too small for its kernels, wrong number of channels...).

    Example:
        >>> features = nn.Sequential(nn.Conv2d(1, 8, 3), nn.MaxPool2d(2), nn.Flatten())
        >>> output_shape(features, (1, 1, 28, 28))
        torch.Size([1, 1352])
    """
    if not isinstance(module, nn.Module):
        raise TypeError(
            f"module must be an nn.Module, got {type(module).__name__}; call it as "
            f"output_shape(module, (1, C, H, W))"
        )
    shape = _check_shape(input_shape)
    meta = torch.device("meta")
    stand_ins = {
        name: torch.empty_like(tensor, device=meta)
        for name, tensor in (*module.named_parameters(), *module.named_buffers())
    }
    dummy = torch.empty(shape, dtype=dtype, device=meta)
    try:
        with torch.no_grad():
            output = functional_call(module, stand_ins, (dummy,))
    except (RuntimeError, ValueError, IndexError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        if "meta" in first and "device" in first:
            raise ValueError(
                f"{type(module).__name__} holds a tensor that is not a registered parameter or "
                f"buffer, so it cannot run on the meta device ({first}); register it in "
                f"__init__ with self.register_buffer(name, tensor)"
            ) from err
        raise ValueError(
            f"{type(module).__name__} cannot take an input of shape {shape}: {first}"
        ) from err
    if not isinstance(output, torch.Tensor):
        raise TypeError(
            f"output_shape needs a module that returns one tensor, got "
            f"{type(output).__name__}; measure the part that returns a tensor"
        )
    return output.shape
