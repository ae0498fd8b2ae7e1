"""Callbacks for ``fit``: a two-method protocol and the two callbacks most runs need.

A callback is any object with ``on_epoch_end(record, state)``; ``fit`` calls it after every
epoch with that epoch's History record, and stops training when it returns True. Three methods
are optional: ``on_fit_end(state)`` (called when ``fit`` ends without an interruption),
``state_dict()`` and ``load_state_dict(state)`` (plain data that ``fit`` keeps in its
checkpoints, so a resumed run decides exactly as the uninterrupted one would).

``state`` is a :class:`FitState`: the model, optimizer, scheduler, history and epoch.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from companion.checkpoint import save_checkpoint, unwrap_model

__all__ = ["FitState", "EarlyStopping", "BestCheckpoint"]


@dataclass
class FitState:
    """What a callback may read (and, for the model, change) at the end of an epoch.

    Attributes:
        model: the model being trained (unwrapped: never DDP or compiled).
        optimizer, scheduler: as passed to ``fit``.
        history: the :class:`~companion.history.History` so far, this epoch included.
        epoch: epochs completed (1-based, equal to ``record["epoch"]``).
        num_epochs: the run's total.
        is_main: False on every torchrun rank but 0 (write files only where it is True).
    """

    model: nn.Module
    optimizer: torch.optim.Optimizer
    scheduler: object
    history: object
    epoch: int = 0
    num_epochs: int = 0
    is_main: bool = True


class _Monitor:
    """The best value of one History column so far: shared by both callbacks."""

    def __init__(self, owner: str, monitor: str, mode: str, min_delta: float = 0.0):
        if not isinstance(monitor, str) or not monitor:
            raise TypeError(
                f"{owner}: monitor must be a History column name such as 'val_loss', "
                f"got {monitor!r}"
            )
        if mode not in ("min", "max"):
            raise ValueError(
                f"{owner}: mode must be 'min' (lower is better, losses) or 'max' (higher is "
                f"better, accuracy), got {mode!r}"
            )
        if isinstance(min_delta, bool) or not isinstance(min_delta, (int, float)) or min_delta < 0:
            raise ValueError(f"{owner}: min_delta must be a number >= 0, got {min_delta!r}")
        self.owner, self.monitor, self.mode, self.min_delta = owner, monitor, mode, min_delta
        self.best: float = math.inf if mode == "min" else -math.inf
        self.best_epoch: int | None = None

    def value(self, record: dict) -> float:
        if self.monitor not in record:
            raise KeyError(
                f"{self.owner}(monitor={self.monitor!r}): the epoch record has no such column; "
                f"it has {sorted(record)} (validation columns need val_loader)"
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
        monitor: a History column, e.g. ``"val_loss"`` or ``"val_accuracy"``.
        patience: epochs without improvement before stopping.
        mode: ``"min"`` (lower is better) or ``"max"``.
        min_delta: an improvement must beat the best value by more than this.
        restore_best_weights: when ``fit`` ends (stopped early or at ``num_epochs``, but not
            when interrupted), load the weights of the best epoch into the model. The best
            weights are kept on the CPU and in fit's checkpoints (one extra model's size).

    Attributes:
        best, best_epoch: the best value seen and its epoch (1-based).
        stopped_epoch: the epoch after which it stopped training, or None.

    Example:
        >>> stopper = EarlyStopping("val_loss", patience=3)
        >>> history = fit(model, train_loader, optimizer, loss_fn, num_epochs=100,
        ...               val_loader=val_loader, callbacks=[stopper])  # doctest: +SKIP
        >>> stopper.stopped_epoch, stopper.best_epoch  # doctest: +SKIP
        (14, 11)
    """

    def __init__(
        self,
        monitor: str = "val_loss",
        patience: int = 3,
        mode: str = "min",
        min_delta: float = 0.0,
        restore_best_weights: bool = False,
    ):
        self._best = _Monitor("EarlyStopping", monitor, mode, min_delta)
        if isinstance(patience, bool) or not isinstance(patience, int) or patience < 1:
            raise ValueError(
                f"EarlyStopping: patience must be an int >= 1 (epochs without improvement), "
                f"got {patience!r}"
            )
        self.monitor, self.mode, self.patience = monitor, mode, patience
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
        monitor: a History column, e.g. ``"val_loss"`` or ``"val_accuracy"``.
        mode: ``"min"`` (lower is better) or ``"max"``.

    Attributes:
        best, best_epoch: the best value seen and its epoch (1-based).

    Example:
        >>> best = BestCheckpoint("runs/a/best.pt", monitor="val_accuracy", mode="max")
        >>> history = fit(model, train_loader, optimizer, loss_fn, num_epochs=20,
        ...               val_loader=val_loader, callbacks=[best])  # doctest: +SKIP
        >>> companion.load_checkpoint(best.path, model=model)["epoch"]  # doctest: +SKIP
        17
    """

    def __init__(self, path: str | os.PathLike, monitor: str = "val_loss", mode: str = "min"):
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
        self.monitor, self.mode = monitor, mode

    @property
    def best(self) -> float:
        return self._best.best

    @property
    def best_epoch(self) -> int | None:
        return self._best.best_epoch

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
