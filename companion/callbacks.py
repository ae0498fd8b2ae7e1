"""Callbacks for ``fit``: the protocol, and the two callbacks most runs need.

**The callback protocol.** A callback is any object with an ``on_epoch_end`` method; every
other method is optional, and ``fit`` calls only the ones an object has. ``state`` is always
the run's :class:`FitState` (the model, optimizer, scheduler, history, epoch, and the columns
the records will have).

``on_fit_start(state)``
    Called once before the first epoch trains (after a resume has loaded the checkpoint, and
    before the epoch it continues). ``state.columns`` lists the columns every epoch's record
    will have (``epoch``, ``train_loss``, ``val_loss``, ``val_accuracy``, ``val_<metric>``,
    ``lr``, ``time``, ...); a callback that adds a column to the record appends its name
    there, and one that cannot work with these columns raises, so that a mistake stops the
    run before it spends an epoch. The return value is ignored.
``on_epoch_end(record, state)``
    Called after every epoch, once the epoch's record (a plain dict, the new History row) is
    complete and appended to ``state.history``, before the end-of-epoch checkpoint is
    written. Returning True stops training after this epoch (``history.stopped_early``);
    any other value (None, False) lets it go on. A change to ``record`` is seen by the
    callbacks after this one in the list, not by the History (it holds a copy).
``on_fit_end(state)``
    Called once when ``fit`` returns after its last epoch or an early stop, not when a signal
    (Ctrl-C, SIGTERM) interrupted it: the run is not over then. The return value is ignored.
``state_dict()``
    Returns plain data (numbers, strings, lists, dicts, tensors) that ``fit`` stores in each
    of its checkpoints, so that a resumed run decides exactly as an uninterrupted one would.
``load_state_dict(state)``
    Called on ``resume=True`` with what ``state_dict()`` returned, before ``on_fit_start``.
    Callbacks are matched to saved states by position and type.

``fit`` also reads one attribute: a callback's ``monitor``, when it is a string, names the
History column it watches; a ``val_`` column without ``val_loader`` is refused before anything
runs.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch import nn

from companion.checkpoint import save_checkpoint, unwrap_model

__all__ = ["FitState", "EarlyStopping", "BestCheckpoint"]


@dataclass
class FitState:
    """What a callback may read (and, for the model, change) during ``fit``.

    Attributes:
        model: the model being trained (unwrapped: never DDP or compiled).
        optimizer: the optimizer passed to ``fit``.
        scheduler: the scheduler passed to ``fit``, or None.
        history: the :class:`~companion.history.History` so far, this epoch included.
        epoch: epochs completed (1-based, equal to ``record["epoch"]``; 0 before the first).
        num_epochs: the run's total.
        is_main: False on every torchrun rank but 0 (write files only where it is True).
        columns: the columns each epoch's record will have, known before the first epoch.
            ``val_accuracy`` and ``train_accuracy`` are written only when the outputs are
            class scores for class-index targets: when a callback's ``monitor`` is one of
            them, ``fit`` looks at the model's outputs on one batch first and lists them only
            if so; otherwise they are listed.
    """

    model: nn.Module
    optimizer: torch.optim.Optimizer
    scheduler: object
    history: object
    epoch: int = 0
    num_epochs: int = 0
    is_main: bool = True
    columns: list = field(default_factory=list)


# Names that say which way is better, matched against the words of a column name
# ("val_macro_f1" -> val, macro, f1); anything else must be told.
_HIGHER_IS_BETTER = {"accuracy", "acc", "f1", "auc", "auroc", "precision", "recall", "iou", "dice"}
_LOWER_IS_BETTER = {"loss", "error", "mse", "mae", "rmse", "perplexity"}


def infer_mode(owner: str, monitor: str) -> str:
    """``"max"`` for accuracy, F1, AUC and the like, ``"min"`` for losses and errors."""
    words = set(re.split(r"[^a-z0-9]+", monitor.lower()))
    higher, lower = words & _HIGHER_IS_BETTER, words & _LOWER_IS_BETTER
    if higher and not lower:
        return "max"
    if lower and not higher:
        return "min"
    raise ValueError(
        f"{owner}: mode=None infers the direction from well-known column names ('loss', "
        f"'error': 'min'; 'accuracy', 'f1', 'auc': 'max'), and monitor={monitor!r} is not one; "
        f"pass mode='min' if lower is better or mode='max' if higher is better"
    )


class _Monitor:
    """The best value of one History column so far: shared by both callbacks."""

    def __init__(self, owner: str, monitor: str, mode: str | None, min_delta: float = 0.0):
        if not isinstance(monitor, str) or not monitor:
            raise TypeError(
                f"{owner}: monitor must be a History column name such as 'val_loss', "
                f"got {monitor!r}"
            )
        if mode is None:
            mode = infer_mode(owner, monitor)
        if mode not in ("min", "max"):
            raise ValueError(
                f"{owner}: mode must be 'min' (lower is better, losses), 'max' (higher is "
                f"better, accuracy) or None (inferred from the name), got {mode!r}"
            )
        if isinstance(min_delta, bool) or not isinstance(min_delta, (int, float)) or min_delta < 0:
            raise ValueError(f"{owner}: min_delta must be a number >= 0, got {min_delta!r}")
        self.owner, self.monitor, self.mode, self.min_delta = owner, monitor, mode, min_delta
        self.best: float = math.inf if mode == "min" else -math.inf
        self.best_epoch: int | None = None

    def check_columns(self, columns: list) -> None:
        if self.monitor not in columns:
            raise ValueError(
                f"{self.owner}: monitor={self.monitor!r} is not a column this run will produce; "
                f"its records will have {list(columns)} (validation columns need val_loader, "
                f"metric columns metrics={{...}}, accuracy columns class scores as outputs and "
                f"class indices as targets). Nothing was trained."
            )

    def value(self, record: dict) -> float:
        if self.monitor not in record:
            raise KeyError(
                f"{self.owner}(monitor={self.monitor!r}): the epoch record has no such column; "
                f"it has {sorted(record)} (accuracy columns need class scores as outputs and "
                f"class indices as targets)"
            )
        return float(record[self.monitor])

    def improved(self, value: float) -> bool:
        if math.isnan(value):
            return False
        if self.mode == "min":
            return value < self.best - self.min_delta
        return value > self.best + self.min_delta

    def state_dict(self) -> dict:
        return {"best": self.best, "best_epoch": self.best_epoch}

    def load_state_dict(self, state: dict) -> None:
        self.best, self.best_epoch = state["best"], state["best_epoch"]


class EarlyStopping:
    """Stop ``fit`` when ``monitor`` has not improved for ``patience`` epochs.

    Args:
        monitor: the History column to watch, e.g. ``"val_loss"`` or ``"val_accuracy"``;
            ``fit`` checks that the run produces it before the first epoch trains.
        patience: how many epochs in a row without improvement stop the run (an int >= 1).
        mode: ``"min"`` when lower is better, ``"max"`` when higher is better, or None (the
            default) to infer it from the name: ``"max"`` for accuracy, F1, AUC, precision,
            recall, IoU and Dice, ``"min"`` for losses and errors; any other name raises and
            asks for the mode.
        min_delta: the margin a new value must beat the best by to count as an improvement
            (in the column's units, >= 0).
        restore_best_weights: when ``fit`` ends (stopped early or at ``num_epochs``, but not
            when interrupted), load the weights of the best epoch into the model. The best
            weights are kept on the CPU and in fit's checkpoints (one extra model's size).

    Attributes:
        best: the best value of ``monitor`` seen so far (inf or -inf before the first epoch).
        best_epoch: the epoch (1-based) that reached ``best``, or None.
        stopped_epoch: the epoch after which it stopped training, or None.

    Raises:
        TypeError: ``monitor`` is not a non-empty string.
        ValueError: ``mode`` is not ``"min"``, ``"max"`` or None, or is None with a name it
            cannot read; ``patience`` or ``min_delta`` is out of range.

    Example:
        >>> stopper = EarlyStopping("val_accuracy", patience=3)
        >>> stopper.mode
        'max'
        >>> history = fit(model, train_loader, optimizer, loss_fn, num_epochs=100,
        ...               val_loader=val_loader, callbacks=[stopper])  # doctest: +SKIP
        >>> stopper.stopped_epoch, stopper.best_epoch  # doctest: +SKIP
        (14, 11)
    """

    def __init__(
        self,
        monitor: str = "val_loss",
        patience: int = 3,
        mode: str | None = None,
        min_delta: float = 0.0,
        restore_best_weights: bool = False,
    ):
        self._best = _Monitor("EarlyStopping", monitor, mode, min_delta)
        if isinstance(patience, bool) or not isinstance(patience, int) or patience < 1:
            raise ValueError(
                f"EarlyStopping: patience must be an int >= 1 (epochs without improvement), "
                f"got {patience!r}"
            )
        self.monitor, self.mode, self.patience = monitor, self._best.mode, patience
        self.restore_best_weights = bool(restore_best_weights)
        self.wait = 0
        self.stopped_epoch: int | None = None
        self._weights: dict | None = None

    @property
    def best(self) -> float:
        return self._best.best

    @property
    def best_epoch(self) -> int | None:
        return self._best.best_epoch

    def on_fit_start(self, state: FitState) -> None:
        self._best.check_columns(state.columns)

    def on_epoch_end(self, record: dict, state: FitState) -> bool:
        value = self._best.value(record)
        if self._best.improved(value):
            self._best.best, self._best.best_epoch, self.wait = value, state.epoch, 0
            if self.restore_best_weights:
                self._weights = {
                    k: v.detach().to("cpu", copy=True)
                    for k, v in unwrap_model(state.model).state_dict().items()
                }
            return False
        self.wait += 1
        if self.wait >= self.patience:
            self.stopped_epoch = state.epoch
            return True
        return False

    def on_fit_end(self, state: FitState) -> None:
        if self.restore_best_weights and self._weights is not None:
            unwrap_model(state.model).load_state_dict(self._weights)

    def state_dict(self) -> dict:
        return {**self._best.state_dict(), "wait": self.wait,
                "stopped_epoch": self.stopped_epoch, "weights": self._weights}  # fmt: skip

    def load_state_dict(self, state: dict) -> None:
        self._best.load_state_dict(state)
        self.wait, self.stopped_epoch = state["wait"], state["stopped_epoch"]
        self._weights = state["weights"]

    def __repr__(self) -> str:
        return (
            f"EarlyStopping(monitor={self.monitor!r}, patience={self.patience}, "
            f"mode={self.mode!r}, best={self.best:.4g} at epoch {self.best_epoch})"
        )


class BestCheckpoint:
    """Write the model to ``path`` (atomically) whenever ``monitor`` reaches a new best.

    The file is a :func:`~companion.save_checkpoint` checkpoint holding the model, the epoch
    and ``monitor``/``value`` entries; load it with
    ``companion.load_checkpoint(path, model=model)``.

    Args:
        path: the file to (over)write, e.g. ``"runs/a/best.pt"``; its folder is created.
        monitor: the History column to watch, e.g. ``"val_loss"`` or ``"val_accuracy"``;
            ``fit`` checks that the run produces it before the first epoch trains.
        mode: ``"min"`` when lower is better, ``"max"`` when higher is better, or None (the
            default) to infer it from the name, as :class:`EarlyStopping` does.

    Attributes:
        best: the best value of ``monitor`` seen so far (inf or -inf before the first epoch).
        best_epoch: the epoch (1-based) whose weights the file holds, or None.

    Raises:
        TypeError: ``path`` is not a file path, or ``monitor`` not a non-empty string.
        IsADirectoryError: ``path`` is a folder.
        ValueError: ``mode`` is not ``"min"``, ``"max"`` or None, or is None with a name it
            cannot read.

    Example:
        >>> best = BestCheckpoint("runs/a/best.pt", monitor="val_accuracy")
        >>> best.mode
        'max'
        >>> history = fit(model, train_loader, optimizer, loss_fn, num_epochs=20,
        ...               val_loader=val_loader, callbacks=[best])  # doctest: +SKIP
        >>> companion.load_checkpoint(best.path, model=model)["epoch"]  # doctest: +SKIP
        17
    """

    def __init__(self, path: str | os.PathLike, monitor: str = "val_loss", mode: str | None = None):
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(
                f"BestCheckpoint: path must be a file path (str or Path), got {type(path).__name__}"
            )
        self.path = Path(path)
        if self.path.is_dir():
            raise IsADirectoryError(
                f"BestCheckpoint: path {os.fspath(self.path)!r} is a folder; pass a file name "
                f"such as {os.fspath(self.path / 'best.pt')!r}"
            )
        self._best = _Monitor("BestCheckpoint", monitor, mode)
        self.monitor, self.mode = monitor, self._best.mode

    @property
    def best(self) -> float:
        return self._best.best

    @property
    def best_epoch(self) -> int | None:
        return self._best.best_epoch

    def on_fit_start(self, state: FitState) -> None:
        self._best.check_columns(state.columns)

    def on_epoch_end(self, record: dict, state: FitState) -> bool:
        value = self._best.value(record)
        if self._best.improved(value):
            self._best.best, self._best.best_epoch = value, state.epoch
            if state.is_main:
                save_checkpoint(self.path, model=state.model, epoch=state.epoch,
                                monitor=self.monitor, value=value)  # fmt: skip
        return False

    def state_dict(self) -> dict:
        return self._best.state_dict()

    def load_state_dict(self, state: dict) -> None:
        self._best.load_state_dict(state)

    def __repr__(self) -> str:
        return (
            f"BestCheckpoint({os.fspath(self.path)!r}, monitor={self.monitor!r}, "
            f"mode={self.mode!r}, best={self.best:.4g} at epoch {self.best_epoch})"
        )


def check_callbacks(callbacks, has_val: bool) -> list:
    """A list of objects with ``on_epoch_end``; ``val_`` monitors need a validation loader."""
    if callbacks is None:
        return []
    if not isinstance(callbacks, (list, tuple)):
        raise TypeError(
            f"callbacks must be a list of callbacks, got {type(callbacks).__name__}; "
            f"e.g. callbacks=[companion.EarlyStopping('val_loss', patience=3)]"
        )
    for i, cb in enumerate(callbacks):
        if isinstance(cb, type):
            raise TypeError(
                f"callbacks[{i}] is the class {cb.__name__}; pass an instance: {cb.__name__}(...)"
            )
        if not callable(getattr(cb, "on_epoch_end", None)):
            raise TypeError(
                f"callbacks[{i}] is a {type(cb).__name__} without an on_epoch_end(record, "
                f"state) method, which every callback needs"
            )
        monitor = getattr(cb, "monitor", None)
        if isinstance(monitor, str) and monitor.startswith("val_") and not has_val:
            raise ValueError(
                f"callbacks[{i}] ({type(cb).__name__}) monitors {monitor!r}, but fit has no "
                f"val_loader: pass val_loader=..., or monitor a training column such as "
                f"'train_loss'"
            )
    return list(callbacks)


def callback_states(callbacks: list) -> list:
    """The checkpointable state of each callback (None for those without state)."""
    return [
        {"type": type(cb).__name__, "state": cb.state_dict()}
        if callable(getattr(cb, "state_dict", None))
        else None
        for cb in callbacks
    ]


def start_callbacks(callbacks: list, state: FitState) -> None:
    """Call each callback's optional ``on_fit_start(state)``, in order."""
    for cb in callbacks:
        if callable(getattr(cb, "on_fit_start", None)):
            cb.on_fit_start(state)


def load_callback_states(callbacks: list, saved: list | None) -> None:
    """Restore by position; a callback of another type than the saved one is an error."""
    saved = saved or []
    for i, cb in enumerate(callbacks):
        entry = saved[i] if i < len(saved) else None
        if entry is None or not callable(getattr(cb, "load_state_dict", None)):
            continue
        if entry["type"] != type(cb).__name__:
            raise ValueError(
                f"callbacks[{i}] is a {type(cb).__name__}, but the checkpoint holds the state "
                f"of a {entry['type']} there: resume with the same callbacks, in the same order"
            )
        cb.load_state_dict(entry["state"])
