"""The training loop: ``train_one_epoch``, ``evaluate`` and ``fit``, which composes them.

``train_one_epoch`` and ``fit`` share one step implementation (``_train_steps``), a generator
that yields after every optimizer step so ``fit`` can show progress, checkpoint mid-epoch and
stop cleanly on a signal, while ``train_one_epoch`` simply runs it to the end.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path

import torch
from torch import nn

from companion._loop_checks import (
    check_checkpoint_dir,
    check_fit_schedule_args,
    check_loader,
    check_loss_fn,
    check_loss_value,
    check_model,
    check_optimizer,
    check_resume_epochs,
    check_scheduler,
    forward_failed,
    loss_failed,
)
from companion.amp import autocast, check_amp, make_scaler
from companion.batches import (
    check_batch_fn,
    check_model_device,
    count_samples,
    forward,
    model_device,
    move_to,
    split_batch,
)
from companion.callbacks import (
    FitState,
    callback_states,
    check_callbacks,
    load_callback_states,
    start_callbacks,
)
from companion.checkpoint import (
    checkpoint_name,
    latest_checkpoint,
    list_checkpoints,
    load_checkpoint,
    save_checkpoint,
)
from companion.device import pick_device
from companion.distributed import setup_distributed
from companion.history import History
from companion.metrics import MetricTotals, check_metrics
from companion.resume import EpochFeed, get_loader_state, saved_by_rank, set_loader_state
from companion.rng import get_rng_state, set_rng_state
from companion.schedule import check_schedule
from companion.signals import StopRequest

__all__ = ["NonFiniteLossError", "train_one_epoch", "evaluate", "fit"]


class NonFiniteLossError(FloatingPointError):
    """The loss became NaN or infinite during training."""


@dataclass
class _Tally:
    """Running totals of one epoch; plain values so a mid-epoch checkpoint can hold them.

    The losses of the steps since the last :meth:`settle` stay on the device, unread: reading a
    GPU tensor waits for every queued step to finish. ``settle`` reads them in one transfer
    and folds them in on the host, in order, exactly as reading each step would.
    """

    loss_sum: float = 0.0
    samples: int = 0
    batches: int = 0  # batches consumed this epoch
    steps: int = 0  # optimizer steps taken
    skipped: int = 0  # steps skipped (non-finite loss, or the fp16 scaler found inf/NaN)

    def __post_init__(self) -> None:
        # per step: (first batch index, [(detached loss, samples), ...]), not yet read
        self._pending: list[tuple[int, list]] = []
        self.epoch = 0  # for the error message

    def defer(self, first_batch: int, losses: list) -> None:
        self._pending.append((first_batch, losses))
        if len(self._pending) >= _SETTLE_EVERY:  # bounds the device memory they hold
            self.settle()

    def settle(self) -> None:
        """Read the unread losses (one transfer) and add them up; raise at a non-finite one."""
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        values = iter(torch.stack([loss for _, group in pending for loss, _ in group]).tolist())
        for first_batch, group in pending:
            group_sum = 0.0
            for offset, (_, n) in enumerate(group):
                value = next(values)
                if not math.isfinite(value):
                    batch = first_batch + offset
                    raise NonFiniteLossError(_nonfinite_message(value, self.epoch, batch, True))
                group_sum += value * n
            self.loss_sum += group_sum

    @property
    def mean_loss(self) -> float:
        self.settle()
        return self.loss_sum / self.samples if self.samples else math.nan

    def state(self) -> dict:
        """The plain values a checkpoint holds (after reading what is pending)."""
        self.settle()
        return asdict(self)


_SETTLE_EVERY = 4096  # steps whose losses may wait on the device before they are read


def _nonfinite_message(value: float, epoch: int, batch: int, late: bool = False) -> str:
    when = (
        " (read when the losses were next collected: the steps after it were taken, so the "
        "weights may hold NaN; no checkpoint was written after it)"
        if late
        else ""
    )
    return (
        f"the loss is {value} in epoch {epoch + 1}, batch {batch + 1}{when}. "
        f"Usual causes: a learning rate too high, log() or division of zero, fp16 "
        f"overflow without a scaler, bad inputs (check torch.isfinite(inputs)). "
        f"Pass skip_nonfinite=True to skip such steps instead."
    )


def _check_args(accumulate, clip_grad_norm, amp):
    if isinstance(accumulate, bool) or not isinstance(accumulate, int) or accumulate < 1:
        raise ValueError(
            f"accumulate must be an int >= 1 (micro-batches per step), got {accumulate!r}"
        )
    if clip_grad_norm is not None and not (
        isinstance(clip_grad_norm, (int, float)) and clip_grad_norm > 0
    ):
        raise ValueError(
            f"clip_grad_norm must be None or a positive number, got {clip_grad_norm!r}"
        )
    check_amp(amp)


def _train_steps(model, loader, optimizer, loss_fn, *, device, amp, scaler, accumulate,
                 clip_grad_norm, scheduler, skip_nonfinite, epoch, tally, batch_fn=None,
                 loss_takes_inputs=False):  # fmt: skip
    """Train over ``loader``, yielding ``tally`` after every optimizer step."""
    model.train()
    tally.epoch = epoch
    loss_fn = _with_inputs(loss_fn) if loss_takes_inputs else loss_fn
    # everything that does not change between steps is settled once, here: this loop's own
    # Python is what it costs over a hand-written loop (benchmarks/loop_overhead.py)
    amp_context = None if amp is None else autocast(device, amp)
    step = partial(_step, model, optimizer, loss_fn, device, device.type == "cuda", amp_context,
                   scaler, clip_grad_norm, scheduler, skip_nonfinite, epoch, tally)  # fmt: skip
    group: list = []
    for batch in loader:
        if batch_fn is None and type(batch) in (tuple, list) and len(batch) == 2:
            group.append(batch)  # the usual (inputs, targets) pair
        else:
            group.append(split_batch(batch, epoch, tally.batches + len(group), batch_fn))
        if len(group) == accumulate:
            step(group)
            group = []
            yield tally
    if group:  # the last, partial accumulation group
        step(group)
        yield tally


class _with_inputs:
    """Marks a loss called as ``loss_fn(outputs, targets, inputs)``."""

    def __init__(self, loss_fn):
        self.loss_fn = loss_fn

    def __call__(self, outputs, targets, inputs):
        return self.loss_fn(outputs, targets, inputs)


def _loss(model, inputs, targets, loss_fn, epoch: int, batch: int):
    """``loss_fn(model(inputs), targets)``; torch's errors get a sentence naming the mistake."""
    try:
        outputs = forward(model, inputs)
    except Exception as err:
        clearer = forward_failed(model, inputs, err, f"epoch {epoch + 1}, batch {batch + 1}")
        if clearer is None:
            raise
        raise clearer from err
    try:
        if isinstance(loss_fn, _with_inputs):
            loss = loss_fn(outputs, targets, inputs)
        else:
            loss = loss_fn(outputs, targets)
    except Exception as err:
        where = f"epoch {epoch + 1}, batch {batch + 1}"
        named = loss_fn.loss_fn if isinstance(loss_fn, _with_inputs) else loss_fn
        clearer = loss_failed(outputs, targets, named, err, where)
        if clearer is None:
            raise
        raise clearer from err
    if not isinstance(loss, torch.Tensor) or loss.ndim:
        check_loss_value(loss, loss_fn, f"epoch {epoch + 1}, batch {batch + 1}")
    return loss


def _step(model, optimizer, loss_fn, device, non_blocking, amp_context, scaler, clip_grad_norm,
          scheduler, skip_nonfinite, epoch, tally, group) -> None:  # fmt: skip
    """One optimizer step over ``group``, a list of micro-batches: equal to one step on their union.

    ``amp_context`` is the autocast context entered for each forward and loss, or None.
    """
    if len(group) == 1:
        counts = (count_samples(*group[0]),)
        total = counts[0]
    else:
        counts = [count_samples(inputs, targets) for inputs, targets in group]
        total = sum(counts)
    losses, loss_sum = [], 0.0
    optimizer.zero_grad(set_to_none=True)
    for (inputs, targets), n in zip(group, counts):
        inputs = move_to(inputs, device, non_blocking)
        targets = move_to(targets, device, non_blocking)
        if amp_context is None:
            loss = _loss(model, inputs, targets, loss_fn, epoch, tally.batches)
        else:
            with amp_context:  # forward and loss only
                loss = _loss(model, inputs, targets, loss_fn, epoch, tally.batches)
        if len(group) > 1:
            # a mean loss over n samples, weighted n/total: the group's gradient equals the
            # gradient of the mean loss over all `total` samples, as one large batch would give
            scaled = loss * (n / total)
        else:
            scaled = loss
        (scaler.scale(scaled) if scaler is not None else scaled).backward()
        if not skip_nonfinite:
            # read later, with others (_Tally.settle); a loss may be (1,)-shaped
            losses.append((loss.detach().reshape(()) if loss.ndim else loss.detach(), n))
            continue
        value = loss.item()  # skipping a step is decided here, on the host: one read per step
        if not math.isfinite(value):
            optimizer.zero_grad(set_to_none=True)
            tally.skipped += 1
            tally.batches += len(group)
            return
        loss_sum += value * n
    if scaler is not None:
        if clip_grad_norm is not None:
            scaler.unscale_(optimizer)  # clip the true gradients, not the scaled ones
            nn.utils.clip_grad_norm_(model.parameters(), clip_grad_norm)
        scale = scaler.get_scale()
        scaler.step(optimizer)  # skipped when the gradients hold inf/NaN
        scaler.update()
        stepped = scaler.get_scale() >= scale  # the scale only drops after a skipped step
    else:
        if clip_grad_norm is not None:
            nn.utils.clip_grad_norm_(model.parameters(), clip_grad_norm)
        optimizer.step()
        stepped = True
    if stepped:
        tally.steps += 1
        if scheduler is not None:
            scheduler.step()
    else:
        tally.skipped += 1
    if skip_nonfinite:
        tally.loss_sum += loss_sum
    else:
        tally.defer(tally.batches, losses)
    tally.samples += total
    tally.batches += len(group)


def train_one_epoch(
    model: nn.Module,
    loader,
    optimizer: torch.optim.Optimizer,
    loss_fn: Callable,
    *,
    device: str | torch.device = "auto",
    amp: str | None = None,
    scaler: torch.amp.GradScaler | None = None,
    accumulate: int = 1,
    clip_grad_norm: float | None = None,
    scheduler=None,
    skip_nonfinite: bool = False,
    epoch: int = 0,
    batch_fn: Callable | None = None,
    loss_takes_inputs: bool = False,
) -> float:
    """Train ``model`` for one pass over ``loader`` and return the mean training loss.

    Puts the model in train mode, clears gradients before every step, and moves each batch
    to ``device`` (the model must already be there).

    The losses stay on the device, so the loop never waits for the GPU between steps: they
    are read together, in one transfer, when their sum is needed (the epoch's end, ``fit``'s
    progress bar at most twice a second, a checkpoint) and at least every 4096 steps. A NaN or
    infinite loss is found then and raises :class:`NonFiniteLossError` naming its epoch and
    batch; the steps queued after it have been taken by then, so the weights may already hold
    NaN (no checkpoint is written past it). ``skip_nonfinite=True`` reads each loss at its step.

    Args:
        model: the model to train, already on ``device``; it is left in train mode.
        loader: yields ``(inputs, targets)`` batches, where ``inputs`` may be a tensor, a
            tuple (passed as ``model(*inputs)``) or a dict (``model(**inputs)``); anything
            else through ``batch_fn``.
        optimizer: built over the model's parameters; its gradients are cleared before every
            step.
        loss_fn: ``loss_fn(outputs, targets) -> scalar tensor``, a mean over the batch (for
            ``accumulate`` to give the larger batch's update).
        device: where the batches go; ``"auto"``: where the model's parameters are.
        amp: None, ``"bf16"`` or ``"fp16"``. Autocast wraps forward and loss only.
        scaler: a ``torch.amp.GradScaler``; required with ``amp="fp16"``. Create it once
            (``companion.make_scaler(device, "fp16")``) so its scale carries over epochs.
        accumulate: micro-batches per optimizer step; the update equals one step on the
            ``accumulate``-times larger batch (for a mean-reduced loss), the last partial
            group included.
        clip_grad_norm: max gradient norm, applied after unscaling.
        scheduler: stepped after every optimizer step actually taken (per-step schedules);
            a step skipped by the scaler does not advance it.
        skip_nonfinite: skip a step whose loss is NaN/inf instead of raising: no optimizer
            or scheduler step, gradients cleared, the weights as they were. Whether to call
            ``optimizer.step()`` is decided on the host, so this reads every micro-batch's loss
            when it is computed (on a GPU, a wait per step, as ``GradScaler`` makes for
            non-fused optimizers).
        epoch: the 0-based epoch index, used in error messages.
        batch_fn: ``batch_fn(batch) -> (inputs, targets)`` for loaders that yield something
            else, e.g. ``lambda b: (b["x"], b["y"])`` for dict batches. Targets may be any
            structure the loss understands (a tuple ``(labels, mask)``, a dict).
        loss_takes_inputs: call ``loss_fn(outputs, targets, inputs)``, for a loss that needs
            the inputs (a padding mask, per-sample weights carried in the inputs).

    Returns:
        The mean loss over the epoch's samples (NaN if every step was skipped).

    Raises:
        NonFiniteLossError: a loss was NaN or inf (unless ``skip_nonfinite``), raised when the
            losses are read (above).
        TypeError: the loader yields something other than ``(inputs, targets)``.
        ValueError: a bad argument (``accumulate < 1``, unknown ``amp``, fp16 without scaler,
            model on another device).

    Example:
        >>> model = nn.Linear(4, 2)
        >>> data = [(torch.randn(8, 4), torch.randint(0, 2, (8,)))] * 3
        >>> opt = torch.optim.SGD(model.parameters(), lr=0.1)
        >>> loss = train_one_epoch(model, data, opt, nn.CrossEntropyLoss(), device="cpu")
    """
    device = model_device(model, device)
    _check_args(accumulate, clip_grad_norm, amp)
    _check_training(model, loader, optimizer, loss_fn, scheduler, "loader")
    check_batch_fn(batch_fn)
    if amp == "fp16" and scaler is None:
        raise ValueError(
            "amp='fp16' needs a GradScaler: pass scaler=companion.make_scaler(device, 'fp16'), "
            "created once outside the epoch loop (or use amp='bf16', which needs none)"
        )
    check_model_device(model, device)
    tally = _Tally()
    steps = _train_steps(model, loader, optimizer, loss_fn, device=device, amp=amp, scaler=scaler,
                         accumulate=accumulate, clip_grad_norm=clip_grad_norm, scheduler=scheduler,
                         skip_nonfinite=skip_nonfinite, epoch=epoch, tally=tally, batch_fn=batch_fn,
                         loss_takes_inputs=loss_takes_inputs)  # fmt: skip
    for _ in steps:
        pass
    if tally.batches == 0:
        raise ValueError("the loader yielded no batches; is the dataset empty?")
    return tally.mean_loss


def _check_training(model, loader, optimizer, loss_fn, scheduler, loader_name: str) -> None:
    check_model(model)
    check_optimizer(optimizer, model, loss_fn)
    check_scheduler(scheduler, optimizer)
    check_loss_fn(loss_fn)
    check_loader(loader, loader_name)


def _is_classification(outputs, targets) -> bool:
    return (
        isinstance(outputs, torch.Tensor)
        and isinstance(targets, torch.Tensor)
        and outputs.dim() >= 2
        and not targets.is_floating_point()
        and targets.shape == outputs.shape[:1] + outputs.shape[2:]
    )


def evaluate(
    model: nn.Module,
    loader,
    loss_fn: Callable,
    *,
    device: str | torch.device = "auto",
    metrics: Mapping | None = None,
    amp: str | None = None,
    batch_fn: Callable | None = None,
    loss_takes_inputs: bool = False,
) -> dict:
    """Evaluate ``model`` on ``loader`` in eval mode, without building any graph.

    Uses ``model.eval()`` (dropout off, batch norm on running statistics) and
    ``torch.inference_mode()``, then restores every submodule's previous mode.

    Args:
        model: the model to evaluate; it runs in eval mode and gets its modes back after.
        loader: yields ``(inputs, targets)`` batches (or what ``batch_fn`` reads), e.g. the
            validation ``DataLoader``; its order does not matter.
        loss_fn: the loss to average over samples, ``loss_fn(outputs, targets)`` (the
            training loss, so that validation and training losses compare).
        device: where the batches go; ``"auto"``: where the model's parameters are.
        batch_fn: ``batch_fn(batch) -> (inputs, targets)`` for loaders that yield something
            else, as in :func:`train_one_epoch`.
        loss_takes_inputs: call ``loss_fn(outputs, targets, inputs)``, for a loss that needs
            the inputs (a padding mask).
        metrics: extra ``{name: metric}``: a function ``fn(outputs, targets)`` returning the
            batch mean, averaged over samples (a per-sample average: right for accuracy, not
            for F1), or a stateful object with ``update(outputs, targets)``, ``compute()`` and
            ``reset()`` (torchmetrics' protocol; :class:`companion.F1Score`), computed over
            the whole loader. See :mod:`companion.metrics`.
        amp: optional autocast for the forward pass (None, "bf16", "fp16").

    Returns:
        ``{"loss": ..., "accuracy": ...}`` (accuracy when outputs look like class scores
        ``(B, C, ...)`` and targets like class indices), plus one entry per metric.

    Example:
        >>> model = nn.Linear(4, 3)
        >>> data = [(torch.randn(6, 4), torch.randint(0, 3, (6,)))]
        >>> sorted(evaluate(model, data, nn.CrossEntropyLoss(), device="cpu"))
        ['accuracy', 'loss']
    """
    device = model_device(model, device)
    check_amp(amp)
    check_model(model)
    check_loss_fn(loss_fn)
    check_loader(loader, "loader")
    check_batch_fn(batch_fn)
    totals = MetricTotals(check_metrics(metrics))
    check_model_device(model, device)
    modes = {m: m.training for m in model.modules()}
    losses, hits, samples, classification = [], [], 0, True
    model.eval()
    try:
        with torch.inference_mode():
            for i, batch in enumerate(loader):
                inputs, targets = split_batch(batch, 0, i, batch_fn)
                inputs, targets = move_to(inputs, device, False), move_to(targets, device, False)
                with autocast(device, amp):
                    outputs = forward(model, inputs)
                    if loss_takes_inputs:
                        loss = loss_fn(outputs, targets, inputs)
                    else:
                        loss = loss_fn(outputs, targets)
                if not isinstance(loss, torch.Tensor) or loss.ndim:
                    check_loss_value(loss, loss_fn, f"evaluation batch {i + 1}")
                n = count_samples(inputs, targets)
                samples += n
                losses.append((loss.reshape(()) if loss.ndim else loss, n))  # read after the loop
                totals.update(outputs, targets, n)
                classification = classification and _is_classification(outputs, targets)
                if classification:
                    hits.append((outputs.argmax(dim=1) == targets).sum())
            if samples:
                loss_values = torch.stack([loss for loss, _ in losses]).tolist()
                hit_values = torch.stack(hits).tolist() if classification else []
    finally:
        for module, mode in modes.items():
            module.train(mode)
    if samples == 0:
        raise ValueError("the loader yielded no batches; is the dataset empty?")
    loss_sum = 0.0
    for value, (_, n) in zip(loss_values, losses):
        loss_sum += value * n
    result = {"loss": loss_sum / samples}
    if classification:
        result["accuracy"] = sum(hit_values) / samples
    result.update(totals.results(samples))
    return result


def fit(
    model: nn.Module,
    train_loader,
    optimizer: torch.optim.Optimizer,
    loss_fn: Callable,
    *,
    num_epochs: int,
    val_loader=None,
    scheduler=None,
    device: str | torch.device = "auto",
    amp: str | None = None,
    accumulate: int = 1,
    clip_grad_norm: float | None = None,
    checkpoint_dir: str | Path | None = None,
    checkpoint_every: int | None = None,
    keep_last: int = 3,
    resume: bool = False,
    progress: bool = True,
    scheduler_step: str = "epoch",
    skip_nonfinite: bool = False,
    metrics: Mapping | None = None,
    callbacks: list | None = None,
    batch_fn: Callable | None = None,
    loss_takes_inputs: bool = False,
    eval_train: bool = False,
) -> History:
    """Train for ``num_epochs`` with optional validation, checkpoints and exact resume.

    No step waits for the GPU: the training losses stay on the device until the progress bar
    shows the running loss (at most twice a second), a checkpoint is written or the epoch
    ends, as in :func:`train_one_epoch` (a non-finite loss raises then); :func:`evaluate`
    reads its sums once, at the end.

    Args:
        model: the model to train; ``fit`` moves it to ``device`` (and wraps it in DDP under
            torchrun), and checkpoints hold it unwrapped.
        train_loader: yields ``(inputs, targets)`` batches (or what ``batch_fn`` reads); a
            ``DataLoader`` over a map-style dataset resumes mid-epoch without replaying.
        optimizer: built over the model's parameters; its state is in every checkpoint.
        loss_fn: ``loss_fn(outputs, targets) -> scalar tensor``, a mean over the batch; also
            the validation loss.
        num_epochs: total epochs (a resumed run continues up to this number).
        val_loader: evaluated after every epoch with :func:`evaluate`.
        scheduler: stepped once per epoch (``ReduceLROnPlateau`` gets the validation loss,
            or the training loss without ``val_loader``), or after every optimizer step with
            ``scheduler_step="step"``. A schedule with its own length (OneCycleLR's
            ``total_steps``, CosineAnnealingLR's ``T_max``) is checked against the run before
            training: too short a OneCycleLR raises, other mismatches warn, and a OneCycleLR
            or warm-up stepped per epoch warns. Count steps with
            :func:`companion.steps_per_epoch`.
        device: ``"auto"`` (CUDA, MPS, CPU), or an explicit device.
        amp: None, ``"bf16"`` or ``"fp16"`` (autocast around forward and loss); with
            ``"fp16"`` fit creates the GradScaler itself and keeps it in its checkpoints.
        accumulate: micro-batches per optimizer step, as in :func:`train_one_epoch`;
            ``checkpoint_every`` and per-step schedules count the steps, not the batches.
        clip_grad_norm: the largest gradient norm allowed, applied after unscaling; None
            leaves gradients as they are.
        skip_nonfinite: skip an optimizer step whose loss is NaN or infinite instead of
            raising :class:`NonFiniteLossError`; each skip is counted in the epoch's
            ``skipped_steps`` column.
        checkpoint_dir: the folder where a checkpoint is written after every epoch (and
            every ``checkpoint_every`` steps); None writes none. A first SIGINT (Ctrl-C) or
            SIGTERM stops training after the current step, saves a checkpoint when there is a
            ``checkpoint_dir``, and returns the History with ``interrupted=True`` (a second
            Ctrl-C aborts at once).
        checkpoint_every: also checkpoint inside an epoch after every this many optimizer
            steps (counted over the whole run), so that a crash or ``kill -9`` loses at most
            that many steps; ``resume=True`` continues from such a checkpoint mid-epoch.
            None checkpoints at epoch ends only. Needs ``checkpoint_dir``.
        keep_last: how many of the newest checkpoints stay in ``checkpoint_dir``; older ones
            are deleted after each save (an int >= 1).
        resume: continue from the newest checkpoint in ``checkpoint_dir`` (start fresh if there
            is none). The resumed run is bit-for-bit the uninterrupted one on CPU. Inside an
            epoch it loads only the batches still to come: a ``DataLoader`` over a map-style
            dataset with a standard sampler (sequential, random, weighted, distributed) redoes
            just the epoch's random draws and skips by sample index; with ``num_workers > 0``
            each batch brings its worker's random state along (about 0.1 ms of worker time),
            the checkpoint keeps it, and augmentations in workers repeat exactly. A loader
            with its own ``state_dict`` (torchdata's ``StatefulDataLoader``) resumes through
            it. Other loaders (iterable datasets, custom samplers, ``persistent_workers=True``)
            are iterated past the consumed batches, with a
            :class:`~companion.resume.ReplayWarning` that says so.
        progress: show a tqdm progress bar per epoch (terminal or notebook); its running loss
            is read from the device when it is redrawn, at most twice a second.
        scheduler_step: ``"epoch"`` steps ``scheduler`` once after every epoch; ``"step"``
            after every optimizer step actually taken (warm-up, OneCycleLR), as
            ``train_one_epoch`` does.
        metrics: extra validation metrics (functions or stateful objects), see
            :func:`evaluate`; columns ``val_<name>``.
        batch_fn: ``batch_fn(batch) -> (inputs, targets)`` for loaders that yield something
            else (a dict), applied to training and validation batches alike.
        loss_takes_inputs: call ``loss_fn(outputs, targets, inputs)`` in training and
            validation, for a loss that needs the inputs (a padding mask).
        eval_train: after every epoch also evaluate on ``train_loader`` (eval mode, one more
            forward pass over it), adding ``train_eval_loss``, ``train_accuracy`` and
            ``train_<metric>`` columns. The random generators and the loader's state are put
            back afterwards, so training goes on exactly as without it.
        callbacks: objects with ``on_epoch_end(record, state)``, called after every epoch;
            one that returns True stops training (``history.stopped_early``). Before the
            first epoch, each one's optional ``on_fit_start(state)`` sees the columns the
            records will have, so a built-in callback whose ``monitor`` the run will not
            produce stops it untrained (for ``val_accuracy`` or ``train_accuracy``, fit
            looks at the outputs of one batch in eval mode first). Built in:
            :class:`~companion.callbacks.EarlyStopping`,
            :class:`~companion.callbacks.BestCheckpoint`; the whole protocol is in
            :mod:`companion.callbacks`. Their ``state_dict()`` goes into fit's checkpoints,
            so a resumed run stops at the same epoch as an uninterrupted one.

    Returns:
        A :class:`~companion.history.History`.

    Example:
        >>> history = fit(model, train_loader, optimizer, loss_fn, num_epochs=5,
        ...               val_loader=val_loader, checkpoint_dir="runs/a")  # doctest: +SKIP
        >>> history.plot()  # doctest: +SKIP
    """
    check_fit_schedule_args(num_epochs, scheduler_step, checkpoint_every, resume,
                            checkpoint_dir, keep_last)  # fmt: skip
    _check_args(accumulate, clip_grad_norm, amp)
    _check_training(model, train_loader, optimizer, loss_fn, scheduler, "train_loader")
    if val_loader is not None:
        check_loader(val_loader, "val_loader")
    check_checkpoint_dir(checkpoint_dir)
    callbacks = check_callbacks(callbacks, val_loader is not None)
    check_batch_fn(batch_fn)
    metrics = check_metrics(metrics)
    ctx, device = setup_distributed(pick_device(device))  # under torchrun: this rank's device
    try:
        run = _Run(
            model, optimizer, scheduler, make_scaler(device, amp), ctx, checkpoint_dir, keep_last
        )
        run.callbacks = callbacks
        state = FitState(model, optimizer, scheduler, run.history, 0, num_epochs, ctx.is_main)
        model.to(device)
        train_model = ctx.wrap(model, device)  # DDP under torchrun; checkpoints hold `model`
        train_loader, val_loader = ctx.shard(train_loader), ctx.shard(val_loader, shuffle=False)
        check_schedule(scheduler, scheduler_step, loader=train_loader, accumulate=accumulate,
                       num_epochs=num_epochs)  # fmt: skip
        if resume:
            run.resume()
            state.history, state.epoch = run.history, run.start_epoch
            if run.history.stopped_early:  # a callback had stopped it: nothing more to train
                return _finish(callbacks, state)
            check_resume_epochs(run.start_epoch, num_epochs, checkpoint_dir)
        watched = {getattr(cb, "monitor", None) for cb in callbacks}
        class_scores = (  # an accuracy column exists only for class scores: look before training
            _gives_class_scores(
                model, train_loader if val_loader is None else val_loader, batch_fn, device, amp
            )
            if watched & {"val_accuracy", "train_accuracy"}
            else True
        )
        state.columns = _columns(optimizer, val_loader, metrics, eval_train, class_scores)
        start_callbacks(callbacks, state)  # a monitor no record will have stops here, untrained
        step_kwargs = dict(device=device, amp=amp, scaler=run.scaler, accumulate=accumulate,
                           clip_grad_norm=clip_grad_norm, skip_nonfinite=skip_nonfinite,
                           scheduler=scheduler if scheduler_step == "step" else None,
                           batch_fn=batch_fn, loss_takes_inputs=loss_takes_inputs)  # fmt: skip
        eval_kwargs = dict(device=device, metrics=metrics, amp=amp, batch_fn=batch_fn,
                           loss_takes_inputs=loss_takes_inputs)  # fmt: skip
        with StopRequest(saving=checkpoint_dir is not None) as stop:
            for epoch in range(run.start_epoch, num_epochs):
                started = time.perf_counter()
                start_batch, resume_rng = run.begin_epoch(epoch, train_loader)
                bar = (
                    _progress_bar(train_loader, epoch, num_epochs, start_batch)
                    if progress and ctx.is_main
                    else None
                )
                batches = run.feed.epoch(start_batch, resume_rng)  # skips what was done, unloaded
                steps = _train_steps(train_model, batches, optimizer, loss_fn, epoch=epoch,
                                     tally=run.tally, **step_kwargs)  # fmt: skip
                epoch_len = _length(train_loader)  # None for a loader without a length
                distributed = ctx.enabled
                for tally in steps:  # kept lean: it runs after every optimizer step
                    run.global_step += 1
                    if bar is not None:
                        bar.advance(tally)
                    if epoch_len is not None and tally.batches >= epoch_len:
                        break  # the end-of-epoch checkpoint (and a requested stop) come next
                    # every rank stops at the same step
                    stopping = ctx.any(stop.requested) if distributed else stop.requested
                    if checkpoint_dir is not None and (
                        stopping or (checkpoint_every and run.global_step % checkpoint_every == 0)
                    ):
                        run.save(epoch, tally.batches)
                    if stopping:
                        run.history.interrupted = True
                        if bar is not None:
                            bar.close()
                        return run.history
                record = _epoch_record(run, model, epoch, started, ctx, train_loader, val_loader,
                                       loss_fn, optimizer, scheduler, scheduler_step, eval_train,
                                       eval_kwargs)  # fmt: skip
                run.history.append(record)
                state.epoch = epoch + 1
                stopped = [cb.on_epoch_end(record, state) is True for cb in callbacks]
                run.history.stopped_early = ctx.any(any(stopped)) and epoch + 1 < num_epochs
                run.end_epoch(epoch)
                if bar is not None:
                    bar.finish(record)
                if run.history.stopped_early:
                    break
                if ctx.any(stop.requested):
                    run.history.interrupted = epoch + 1 < num_epochs
                    break
        return run.history if run.history.interrupted else _finish(callbacks, state)
    finally:
        ctx.close()


def _epoch_record(run, model, epoch, started, ctx, train_loader, val_loader, loss_fn, optimizer,
                  scheduler, scheduler_step, eval_train, eval_kwargs) -> dict:  # fmt: skip
    """The epoch's record (losses, scores, learning rates, time), with the epoch's scheduler step."""
    if run.tally.batches == 0:
        raise ValueError(f"train_loader yielded no batches in epoch {epoch + 1}")
    record = ctx.mean({"train_loss": run.tally.mean_loss})
    if eval_train:
        scores = _evaluate_aside(model, train_loader, loss_fn, eval_kwargs)
        scores["eval_loss"] = scores.pop("loss")
        record.update({f"train_{k}": v for k, v in ctx.mean(scores).items()})
    if val_loader is not None:
        scores = evaluate(model, val_loader, loss_fn, **eval_kwargs)
        record.update({f"val_{k}": v for k, v in ctx.mean(scores).items()})
    record = {"epoch": epoch + 1, **record, **_learning_rates(optimizer)}
    if scheduler is not None and scheduler_step == "epoch":
        if isinstance(scheduler, torch.optim.lr_scheduler.ReduceLROnPlateau):
            scheduler.step(record.get("val_loss", record["train_loss"]))
        else:
            scheduler.step()
    record["time"] = time.perf_counter() - started
    if run.tally.skipped:
        record["skipped_steps"] = run.tally.skipped
    return record


def _columns(
    optimizer, val_loader, metrics: dict, eval_train: bool, class_scores: bool = True
) -> list[str]:
    """The columns :func:`_epoch_record` can write, in its order, known before training."""
    scores = ["accuracy", *metrics] if class_scores else list(metrics)
    columns = ["epoch", "train_loss"]
    if eval_train:
        columns += [*(f"train_{name}" for name in scores), "train_eval_loss"]
    if val_loader is not None:
        columns += ["val_loss", *(f"val_{name}" for name in scores)]
    return [*columns, *_learning_rates(optimizer), "time", "skipped_steps"]


def _gives_class_scores(model, loader, batch_fn, device, amp) -> bool:
    """Whether the model's outputs on the loader's first batch are class scores for its targets.

    One forward pass in eval mode; the model's modes, every generator and the loader's state
    are put back, so the run goes on exactly as without it. An empty loader says True (the
    run fails on it later, with its own message).
    """
    rng, loader_state = get_rng_state(), get_loader_state(loader)
    modes = {m: m.training for m in model.modules()}
    model.eval()
    try:
        with torch.inference_mode():
            for batch in loader:
                inputs, targets = split_batch(batch, 0, 0, batch_fn)
                inputs, targets = move_to(inputs, device, False), move_to(targets, device, False)
                with autocast(device, amp):
                    return _is_classification(forward(model, inputs), targets)
            return True
    finally:
        for module, mode in modes.items():
            module.train(mode)
        set_rng_state(rng)
        set_loader_state(loader, loader_state)


def _learning_rates(optimizer) -> dict:
    """``lr`` of the first parameter group, ``lr_1``, ``lr_2``, ... of the others."""
    groups = optimizer.param_groups
    rates = {"lr": float(groups[0]["lr"])}
    rates.update({f"lr_{i}": float(g["lr"]) for i, g in enumerate(groups[1:], start=1)})
    return rates


def _evaluate_aside(model, loader, loss_fn, eval_kwargs) -> dict:
    """Evaluate on the training loader, leaving its state and every generator as they were."""
    rng, loader_state = get_rng_state(), get_loader_state(loader)
    try:
        return evaluate(model, loader, loss_fn, **eval_kwargs)
    finally:
        set_rng_state(rng)
        set_loader_state(loader, loader_state)


def _finish(callbacks: list, state: FitState) -> History:
    for cb in callbacks:
        if callable(getattr(cb, "on_fit_end", None)):
            cb.on_fit_end(state)
    return state.history


class _Run:
    """The state of one ``fit`` call that checkpoints carry: history, counters, epoch start."""

    def __init__(self, model, optimizer, scheduler, scaler, ctx, checkpoint_dir, keep_last):
        self.objects = dict(model=model, optimizer=optimizer, scheduler=scheduler, scaler=scaler)
        self.scaler, self.ctx = scaler, ctx
        self.checkpoint_dir, self.keep_last = checkpoint_dir, keep_last
        self.history, self.tally = History(), _Tally()
        self.global_step, self.start_epoch = 0, 0
        self.epoch_start = None  # RNG and loader state when the current epoch began
        self._resume_point = None
        self.feed, self._saved_feed = None, None  # the loader's batches; its checkpointed state
        self.callbacks: list = []

    def resume(self) -> None:
        path = latest_checkpoint(self.checkpoint_dir)
        if path is None:
            return  # nothing to resume from: start fresh
        state = load_checkpoint(path, **self.objects, restore_rng=False)
        saved = state["fit"]
        self.history = History.from_dict(saved["history"])
        self.global_step, self.start_epoch = saved["global_step"], state["epoch"]
        self._saved_feed = saved.get("feed")
        load_callback_states(self.callbacks, saved.get("callbacks"))
        if state["step"]:  # mid-epoch: rebuild the epoch's order, then continue from there
            self.tally = _Tally(**saved_by_rank(saved, self.ctx.rank, "tally", saved["tally"]))
            self._resume_point = (saved["epoch_start"], state["rng"])
        else:
            set_rng_state(state["rng"])

    def begin_epoch(self, epoch: int, loader):
        """Returns (batches to skip, RNG state to restore after skipping them)."""
        self.ctx.set_epoch(loader, epoch)
        if self.feed is None:  # first epoch of this call; restores a resumed loader's state
            self.feed = EpochFeed(loader, capture=self.checkpoint_dir is not None,
                                  saved=self._saved_feed, mid_epoch=self._resume_point is not None,
                                  rank=self.ctx.rank, world_size=self.ctx.world_size)  # fmt: skip
        if self._resume_point is not None:
            self.epoch_start, resume_rng = self._resume_point
            self._resume_point = None
            set_rng_state(self.epoch_start["rng"])
            set_loader_state(loader, self.epoch_start["loader"])
            return self.tally.batches, resume_rng
        self.epoch_start = {"rng": get_rng_state(), "loader": get_loader_state(loader)}
        self.tally = _Tally()
        return 0, None

    def end_epoch(self, epoch: int) -> None:
        self.tally, self.epoch_start = _Tally(), None
        if self.checkpoint_dir is not None:
            self.save(epoch + 1, 0)

    def save(self, epoch: int, step: int) -> None:
        # on every rank: each has its own workers and running tally
        feed = self.feed.state(tally=self.tally.state()) if self.feed is not None else None
        if self.ctx.is_main:
            fit_state = dict(history=self.history.to_dict(), global_step=self.global_step,
                             tally=self.tally.state(), epoch_start=self.epoch_start,
                             feed=feed, callbacks=callback_states(self.callbacks))  # fmt: skip
            path = Path(self.checkpoint_dir) / checkpoint_name(epoch, self.global_step)
            save_checkpoint(path, **self.objects, epoch=epoch, step=step, fit=fit_state)
            for old in list_checkpoints(self.checkpoint_dir)[: -self.keep_last]:
                old.unlink(missing_ok=True)
        self.ctx.barrier()


def _length(loader) -> int | None:
    """``len(loader)``, or None when it has none (an iterable-style DataLoader raises)."""
    try:
        return len(loader)
    except TypeError:
        return None


def _progress_bar(loader, epoch, num_epochs, initial):
    from companion._progress import EpochBar

    return EpochBar(loader, epoch, num_epochs, initial)
