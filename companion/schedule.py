"""Step counting you cannot get wrong: optimizer steps per epoch, and schedules that fit the run.

A per-step schedule (OneCycleLR, a cosine with ``T_max`` in steps) is built from a step count
that must equal the optimizer steps ``fit`` will take: with ``accumulate=k`` that is
``ceil(batches / k)`` per epoch, not ``len(loader)``. :func:`steps_per_epoch` gives the number;
``fit`` checks the schedule against it before the first batch.
"""

from __future__ import annotations

import math
import os
import warnings

import torch
from torch.utils.data import DataLoader, DistributedSampler

__all__ = ["steps_per_epoch"]


def steps_per_epoch(loader, accumulate: int = 1) -> int:
    """The optimizer steps ``fit`` takes per epoch over ``loader`` with ``accumulate``.

    Under torchrun (``WORLD_SIZE`` > 1) a plain DataLoader counts the batches of one rank's
    shard, as ``fit`` will shard it.

    Args:
        loader: the training loader (it must have a length).
        accumulate: micro-batches per optimizer step, as passed to ``fit``.

    Returns:
        ``ceil(len(loader) / accumulate)``: the last, partial group is a step too.

    Raises:
        TypeError: the loader has no length (an iterable dataset): count its batches yourself.
        ValueError: ``accumulate`` is not an int >= 1.

    Example:
        >>> steps_per_epoch(range(10), accumulate=4)
        3
        >>> # OneCycleLR(optimizer, max_lr=0.1, epochs=num_epochs,
        >>> #            steps_per_epoch=steps_per_epoch(train_loader, accumulate=4))
    """
    if isinstance(accumulate, bool) or not isinstance(accumulate, int) or accumulate < 1:
        raise ValueError(
            f"accumulate must be an int >= 1 (micro-batches per step), got {accumulate!r}"
        )
    try:
        batches = len(loader)
    except TypeError:
        raise TypeError(
            f"steps_per_epoch needs a loader with a length, got a {type(loader).__name__} "
            f"without len() (an iterable dataset?): count its batches per epoch yourself"
        ) from None
    world = int(os.environ.get("WORLD_SIZE", "1") or 1)
    if (
        world > 1
        and isinstance(loader, DataLoader)
        and loader.batch_size
        and not isinstance(loader.sampler, DistributedSampler)
    ):
        samples = math.ceil(len(loader.dataset) / world)  # DistributedSampler pads to this
        if loader.drop_last:
            batches = samples // loader.batch_size
        else:
            batches = math.ceil(samples / loader.batch_size)
    return math.ceil(batches / accumulate)


_PER_STEP = ("OneCycleLR", "CyclicLR")


def _total(scheduler) -> tuple[str, int] | None:
    """The schedule's own length (attribute name, value), when it has one."""
    name = type(scheduler).__name__
    if name == "OneCycleLR":
        return "total_steps", scheduler.total_steps
    if name == "CosineAnnealingLR":
        return "T_max", scheduler.T_max
    if name in ("LinearLR", "PolynomialLR"):
        return "total_iters", scheduler.total_iters
    return None


def check_schedule(scheduler, scheduler_step: str, *, loader, accumulate: int,
                   num_epochs: int) -> None:  # fmt: skip
    """Before training: a schedule whose length does not match the run raises or warns."""
    if scheduler is None or isinstance(scheduler, torch.optim.lr_scheduler.ReduceLROnPlateau):
        return
    name = type(scheduler).__name__
    if scheduler_step == "epoch":
        expected, unit = num_epochs, "epochs"
    else:
        try:
            expected, unit = steps_per_epoch(loader, accumulate) * num_epochs, "optimizer steps"
        except TypeError:
            return  # an iterable loader: the run's length is unknown
    total = _total(scheduler)
    if scheduler_step == "epoch" and name in _PER_STEP + ("LinearLR",):
        if total is not None and total[1] == expected:
            return  # built in epochs on purpose
        per_step = steps_per_epoch(loader, accumulate) if hasattr(loader, "__len__") else "N"
        what = "a warm-up" if name == "LinearLR" else "a per-step schedule"
        own = "" if total is None else f" ({total[0]}={total[1]})"
        warnings.warn(
            f"{name} is stepped once per epoch (scheduler_step='epoch'), but it is {what}"
            f"{own}, counted in optimizer steps: stepped per epoch it moves in jumps of a whole "
            f"epoch (and a OneCycleLR runs {num_epochs} of its steps). Pass "
            f"scheduler_step='step' and count steps with companion.steps_per_epoch("
            f"train_loader, accumulate={accumulate}) (= {per_step} per epoch)",
            UserWarning,
            stacklevel=3,
        )
        return
    if total is None:
        return
    attribute, length = total
    if length == expected:
        return
    fix = (
        f"build it with {attribute}={expected} (companion.steps_per_epoch(train_loader, "
        f"accumulate={accumulate}) * num_epochs)"
        if scheduler_step == "step"
        else f"build it with {attribute}={expected} (num_epochs)"
    )
    message = (
        f"{name} has {attribute}={length}, but this fit runs {expected} {unit} "
        f"(num_epochs={num_epochs}"
        + (f", accumulate={accumulate}" if scheduler_step == "step" else "")
        + f"): {fix}"
    )
    if name == "OneCycleLR" and length < expected:
        raise ValueError(message + "; OneCycleLR raises once stepped past its total_steps")
    if name in ("LinearLR", "PolynomialLR") and length < expected:
        return  # a warm-up (or decay) shorter than the run, then constant: on purpose
    done = f"it would run {min(length, expected) / length:.0%} of its schedule"
    if name == "CosineAnnealingLR" and length < expected:
        done = "past T_max the learning rate climbs back up"
    warnings.warn(f"{message}; {done}", UserWarning, stacklevel=3)
