"""Weight updates written by hand: an accumulated step, and an exponential moving average.

``accumulation_step`` takes one optimizer step over several micro-batches that equals one step on
their union, whatever the loss reduces by (the way to train with a batch that does not fit in
memory); ``ema_update`` keeps an
exponential moving average of a model's weights without autograd ever seeing it.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence

import torch
from torch import nn

__all__ = ["accumulation_step", "ema_update"]


def accumulation_step(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    micro_batches: Sequence[tuple[torch.Tensor, torch.Tensor]],
) -> float:
    """Take one optimizer step over ``micro_batches``, equal to one step on all of them at once.

    "All of them at once" is the large batch made by concatenating the micro-batches, with
    ``loss_fn`` applied to the whole of it. Each micro-batch has its own forward and backward
    pass, so only one micro-batch's activations are held at a time, and its loss is weighted so
    that the gradients add up to the large batch's, even when the micro-batches differ in size:

    - ``reduction="sum"``: the large batch's loss is the sum of the micro-batches' sums, so each
      counts as it is.
    - ``reduction="mean"``: a mean divides by what counts, and each micro-batch is weighted by
      its share of that. What counts is every element of the targets, except those equal to
      ``loss_fn.ignore_index`` (``nn.CrossEntropyLoss`` and ``nn.NLLLoss``: padding, -100 by
      default); with class weights (``weight=``), each counted target counts its class's weight.
      Weighting by the number of rows is wrong as soon as the micro-batches hold different
      amounts of padding, and dividing by the number of micro-batches as soon as they differ in
      size.

    Gradients left from before the call are cleared first; afterwards every parameter's
    ``.grad`` holds the large batch's gradient, ready to inspect or clip. A micro-batch in which
    no target counts adds nothing to a mean and is skipped (its mean loss would be NaN).

    The equality holds for models that treat samples independently. Batch norm in train mode
    normalizes each micro-batch with its own statistics, so it breaks it; so does dropout,
    whose masks come from the random generator in another order.

    Args:
        model: the model, on the device the batches are on.
        optimizer: an optimizer over ``model``'s parameters.
        loss_fn: a loss module with ``reduction`` ``"mean"`` or ``"sum"``, e.g.
            ``nn.CrossEntropyLoss(ignore_index=-100)`` or ``nn.MSELoss(reduction="sum")``; a plain
            function is taken to average over every element of the targets.
        micro_batches: ``(inputs, targets)`` pairs.

    Returns:
        The large batch's loss (``loss_fn`` on all micro-batches at once), as a Python float.

    Raises:
        ValueError: if ``micro_batches`` is empty or holds an empty batch, ``loss_fn``'s
            ``reduction`` is neither ``"mean"`` nor ``"sum"``, or no target counts at all.
        TypeError: if an item of ``micro_batches`` is not an ``(inputs, targets)`` pair of
            tensors.

    Example:
        >>> model = nn.Linear(3, 4)
        >>> optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        >>> x, y = torch.randn(10, 3), torch.tensor([0, 1, -100, 3, 2, -100, -100, 1, 0, 2])
        >>> loss = accumulation_step(
        ...     model, optimizer, nn.CrossEntropyLoss(), [(x[:6], y[:6]), (x[6:], y[6:])]
        ... )
    """
    batches = list(micro_batches)
    if not batches:
        raise ValueError("micro_batches is empty: give at least one (inputs, targets) pair")
    reduction = getattr(loss_fn, "reduction", "mean")
    if reduction not in ("mean", "sum"):
        raise ValueError(
            f"loss_fn must reduce the batch to one number (reduction='mean' or 'sum'), got "
            f"reduction={reduction!r}"
        )
    counts = [_counted(loss_fn, _targets(batch, index)) for index, batch in enumerate(batches)]
    total = sum(counts)
    if reduction == "mean" and total == 0:
        raise ValueError(
            "no target counts in any micro-batch (all equal loss_fn.ignore_index, or weigh 0): "
            "the large batch's mean loss is undefined"
        )
    optimizer.zero_grad(set_to_none=True)  # nothing from before this call may leak in
    large_loss = 0.0
    for (inputs, targets), count in zip(batches, counts):
        if reduction == "mean" and count == 0:
            continue  # nothing counts here: its mean is 0/0, and its share of the mean is 0
        loss = loss_fn(model(inputs), targets)
        # a sum adds up as it is; a mean over `count` counted elements, weighted count/total,
        # adds up to the mean over all `total` of them, whose gradient one large batch gives
        share = 1.0 if reduction == "sum" else count / total
        (loss * share).backward()  # frees this micro-batch's graph
        large_loss += loss.item() * share
    optimizer.step()
    return large_loss


def _targets(batch, index: int) -> torch.Tensor:
    if not (isinstance(batch, (tuple, list)) and len(batch) == 2):
        what = type(batch).__name__
        if isinstance(batch, (tuple, list)):
            what += f" of length {len(batch)}"
        raise TypeError(f"micro_batches[{index}] must be an (inputs, targets) pair, got {what}")
    targets = batch[1]
    if not isinstance(targets, torch.Tensor) or targets.dim() == 0:
        what = "a 0-d tensor" if isinstance(targets, torch.Tensor) else type(targets).__name__
        raise TypeError(
            f"micro_batches[{index}]'s targets must be a tensor with a batch dimension, got {what}"
        )
    if targets.shape[0] == 0:
        raise ValueError(f"micro_batches[{index}] is empty (0 samples)")
    return targets


def _counted(loss_fn, targets: torch.Tensor) -> float:
    """What a mean over ``targets`` divides by (any constant factor cancels out in the shares)."""
    ignore_index = getattr(loss_fn, "ignore_index", None)
    if ignore_index is None or targets.is_floating_point():
        return float(targets.numel())  # class probabilities or regression: every element counts
    kept = targets[targets != ignore_index]
    weight = getattr(loss_fn, "weight", None)
    if weight is None:
        return float(kept.numel())
    return float(weight.detach()[kept].sum().item())


@torch.no_grad()
def ema_update(ema_model: nn.Module, model: nn.Module, decay: float) -> None:
    """Move ``ema_model``'s weights towards ``model``'s: one step of an exponential moving average.

    Every parameter becomes ``decay * ema + (1 - decay) * param``, in place: the tensors keep
    their identity and memory, so anything holding them (an earlier ``state_dict()``, an
    ``AveragedModel``) sees the new values. Buffers (batch norm's running statistics and
    counters) are copied from ``model``: they describe the live model's activations and are not
    averaged (``torch.optim.swa_utils.AveragedModel``'s default, ``use_buffers=False``). No
    autograd graph is recorded, and ``ema_model``'s parameters stop requiring grad: the average
    is never trained. ``model`` is not changed. ``ema_model`` may live on another device (an
    average kept on the CPU for a model on a GPU).

    Args:
        ema_model: the average, usually started as ``copy.deepcopy(model)``.
        model: the model being trained, with the same parameter and buffer names and shapes.
        decay: how much of the old average each update keeps, in [0, 1]: 0 copies ``model``, 1
            leaves the average as it is; 0.99-0.9999 are typical, the larger the longer the
            memory (about ``1 / (1 - decay)`` steps).

    Raises:
        TypeError: if ``decay`` is not a real number, or a model is not an ``nn.Module``.
        ValueError: if ``decay`` is outside [0, 1], or the two models' parameters or buffers
            differ in names or shapes.

    Example:
        >>> import copy
        >>> model = nn.Linear(2, 1)
        >>> ema_model = copy.deepcopy(model)
        >>> with torch.no_grad():
        ...     _ = model.weight.add_(1.0)
        >>> ema_update(ema_model, model, decay=0.9)
        >>> torch.allclose(ema_model.weight, 0.9 * (model.weight - 1.0) + 0.1 * model.weight)
        True
    """
    for name, module in (("ema_model", ema_model), ("model", model)):
        if not isinstance(module, nn.Module):
            raise TypeError(f"{name} must be an nn.Module, got {type(module).__name__}")
    if isinstance(decay, bool) or not isinstance(decay, numbers.Real):
        raise TypeError(f"decay must be a number in [0, 1], got {type(decay).__name__}")
    if not (0.0 <= decay <= 1.0) or math.isnan(decay):
        raise ValueError(f"decay must be in [0, 1] (0.99-0.9999 are typical), got {decay}")
    params = _matched(
        dict(ema_model.named_parameters()), dict(model.named_parameters()), "parameters"
    )
    buffers = _matched(dict(ema_model.named_buffers()), dict(model.named_buffers()), "buffers")
    weight = 1.0 - float(decay)
    for average, current in params:
        average.requires_grad_(False)  # the average is never trained
        average.lerp_(current.to(average.device, average.dtype), weight)
    for average, current in buffers:
        average.copy_(current)


def _matched(averages: dict, currents: dict, what: str) -> list:
    if averages.keys() != currents.keys():
        missing = sorted(currents.keys() - averages.keys())
        extra = sorted(averages.keys() - currents.keys())
        parts = [
            f"ema_model lacks {missing[:3]}" if missing else "",
            f"model lacks {extra[:3]}" if extra else "",
        ]
        raise ValueError(
            f"ema_model and model must have the same {what}: {', '.join(p for p in parts if p)}; "
            "build ema_model with copy.deepcopy(model)"
        )
    wrong = [k for k in currents if averages[k].shape != currents[k].shape]
    if wrong:
        k = wrong[0]
        raise ValueError(
            f"ema_model and model differ in the shape of {what[:-1]} {k!r}: "
            f"{tuple(averages[k].shape)} and {tuple(currents[k].shape)}"
        )
    return [(averages[k], currents[k]) for k in currents]
