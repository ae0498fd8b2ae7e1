"""A per-epoch tqdm bar that works in a terminal and in JupyterLab (imported only when used)."""

from __future__ import annotations

import time

from tqdm.auto import tqdm


class EpochBar:
    def __init__(self, loader, epoch: int, num_epochs: int, initial: int = 0):
        total = len(loader) if hasattr(loader, "__len__") else None
        self._bar = tqdm(
            total=total,
            initial=initial,
            desc=f"epoch {epoch + 1}/{num_epochs}",
            unit="batch",
            leave=True,
            dynamic_ncols=True,
        )
        self._last = 0.0

    @property
    def n(self) -> int:
        return self._bar.n

    def update(self, k: int) -> None:
        if k:
            self._bar.update(k)

    def throttled_postfix(self, **values) -> None:
        # formatting a postfix costs microseconds; a person reads it a few times a second
        now = time.monotonic()
        if now - self._last > 0.5:
            self._last = now
            self._bar.set_postfix({k: f"{v:.4g}" for k, v in values.items()}, refresh=False)

    def finish(self, record: dict) -> None:
        shown = {k: v for k, v in record.items() if k in ("train_loss", "val_loss", "val_accuracy")}
        self._bar.set_postfix({k: f"{v:.4g}" for k, v in shown.items()}, refresh=True)
        self._bar.close()

    def close(self) -> None:
        self._bar.close()
