"""Turning SIGINT/SIGTERM into a polite request to stop after the current step."""

from __future__ import annotations

import signal
import sys
import threading

__all__ = ["StopRequest"]


class StopRequest:
    """Context manager: while active, the first SIGINT or SIGTERM sets ``requested`` instead of
    killing the process, so the loop can save a checkpoint (when ``saving``) and return. A second SIGINT aborts
    at once (``KeyboardInterrupt``). Handlers are installed only in the main thread and
    restored on exit.

    Example:
        >>> with StopRequest() as stop:
        ...     for step in range(3):
        ...         if stop.requested:
        ...             break
    """

    def __init__(self, enabled: bool = True, saving: bool = True):
        self.enabled, self.saving = enabled, saving
        self.requested = False
        self.signal_name: str | None = None
        self._previous: dict = {}

    def _handle(self, signum, frame):
        if self.requested and signum == signal.SIGINT:
            self._restore()
            raise KeyboardInterrupt
        self.requested = True
        self.signal_name = signal.Signals(signum).name
        then = (
            "saving a checkpoint after this step and stopping"
            if self.saving
            else (
                "stopping after this step (no checkpoint_dir: nothing is saved, fit returns the "
                "History so far)"
            )
        )
        print(
            f"\n{self.signal_name} received: {then} (press Ctrl-C again to abort at once)",
            file=sys.stderr,
            flush=True,
        )

    def __enter__(self) -> StopRequest:
        if self.enabled and threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def _restore(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous = {}

    def __exit__(self, *exc) -> None:
        self._restore()
