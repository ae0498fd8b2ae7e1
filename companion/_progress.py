"""A per-epoch tqdm bar that works in a terminal and in JupyterLab (imported only when used)."""

from __future__ import annotations

import time

from tqdm.auto import tqdm


class EpochBar:
    def __init__(self, loader, epoch: int, num_epochs: int, initial: int = 0):
        try:
            total = len(loader)
        except TypeError:  # no length (an iterable-style dataset): a bar that counts up
            total = None
        self._bar = tqdm(
            total=total,
            initial=initial,
            desc=f"epoch {epoch + 1}/{num_epochs}",
            unit="batch",
            leave=True,
            dynamic_ncols=True,
        )
        # the bar was drawn at 0 just now: the first update waits its 0.1 s like the others
        self._last = self._shown = time.monotonic()
        self._tally = None  # the newest tally given to advance()

    def advance(self, tally) -> None:
        """Show ``tally.batches`` done and the running loss, touching tqdm at most every 0.1 s.

        Called after every optimizer step; a person reads the bar a few times a second, and the
        loop pays for each call, so most calls only remember the tally. The running loss is
        read from the device (``tally.mean_loss`` waits for the queued steps) at most every
        0.5 s, the only reads inside an epoch besides checkpoints.
        """
        self._tally = tally
        now = time.monotonic()
        if now - self._shown < 0.1:
            return
        self._shown = now
        self._bar.update(tally.batches - self._bar.n)
        if now - self._last > 0.5:
            self._last = now
            self._bar.set_postfix({"loss": f"{tally.mean_loss:.4g}"}, refresh=False)

    def _catch_up(self) -> None:
        if self._tally is not None:
            self._bar.update(self._tally.batches - self._bar.n)

    def finish(self, record: dict) -> None:
        self._catch_up()
        shown = {k: v for k, v in record.items() if k in ("train_loss", "val_loss", "val_accuracy")}
        self._bar.set_postfix({k: f"{v:.4g}" for k, v in shown.items()}, refresh=False)
        self._bar.close()  # draws the bar once more, with the postfix

    def close(self) -> None:
        self._catch_up()
        self._bar.close()
