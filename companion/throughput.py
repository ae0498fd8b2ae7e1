"""How fast a loader delivers batches, for each ``num_workers`` and ``pin_memory`` setting.

``loader_throughput`` builds a fresh loader per setting, times it side by side with the others
and returns a ``ThroughputTable``: it prints, renders in a notebook, converts to plain data and
plots itself. ``choose_num_workers`` turns a measured sweep into a decision (``table.recommend()``).
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import torch

from companion._checks import check_bool, check_int
from companion._extras import need

__all__ = ["ThroughputTable", "choose_num_workers", "loader_throughput", "plan_num_workers"]


def _count_samples(batch: Any) -> int:
    if isinstance(batch, torch.Tensor):
        return len(batch) if batch.ndim else 1
    if isinstance(batch, (tuple, list)) and batch:
        return _count_samples(batch[0])
    if isinstance(batch, dict) and batch:
        return _count_samples(next(iter(batch.values())))
    raise TypeError(
        f"cannot count the samples in a batch of type {type(batch).__name__}; the loader should "
        "yield tensors, or tuples/lists/dicts whose first item is a tensor."
    )


def _move(batch: Any, device: torch.device, non_blocking: bool) -> Any:
    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=non_blocking)
    if isinstance(batch, (tuple, list)):
        return [_move(b, device, non_blocking) for b in batch]
    if isinstance(batch, dict):
        return {k: _move(v, device, non_blocking) for k, v in batch.items()}
    return batch


def _pinning_works() -> bool:
    """Whether DataLoader's pin_memory does anything here (it needs a non-MPS accelerator)."""
    if not torch.accelerator.is_available():
        return False
    return torch.accelerator.current_accelerator().type != "mps"


class ThroughputTable:
    """The result of ``loader_throughput``: one row per (num_workers, pin_memory) setting.

    Prints as an aligned table, renders as HTML in a notebook, converts with ``to_dict()`` and
    draws itself with ``plot()``.

    Attributes:
        rows: one dict per setting, with keys ``num_workers``, ``pin_memory``,
            ``samples_per_s`` (NaN where skipped), ``batches`` (measured after the first),
            ``startup_s`` (from ``make_loader`` to the first batch, worker start-up included)
            and ``note``.
    """

    columns = ("num_workers", "pin_memory", "samples_per_s", "batches", "startup_s", "note")

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows

    def to_dict(self) -> dict[str, list[Any]]:
        """Columns as lists: ``pandas.DataFrame(table.to_dict())`` works.

        Returns:
            ``{column: [value per row]}`` for each of ``ThroughputTable.columns``.

        Example:
            >>> ThroughputTable([]).to_dict()["samples_per_s"]
            []
        """
        return {c: [row[c] for row in self.rows] for c in self.columns}

    def best(self) -> dict[str, Any] | None:
        """The measured row with the most samples per second (None when nothing was measured).

        Example:
            >>> ThroughputTable([]).best() is None
            True
        """
        measured = [r for r in self.rows if not math.isnan(r["samples_per_s"])]
        return max(measured, key=lambda r: r["samples_per_s"]) if measured else None

    def recommend(self, tolerance: float = 0.1) -> int:
        """The fewest workers within ``tolerance`` of the fastest setting (``choose_num_workers``).

        Each worker count counts with its faster ``pin_memory`` setting.

        Args:
            tolerance: how much slower than the fastest setting is still good enough, as a
                share of its speed (0.1: within 10 %).

        Raises:
            ValueError: when no row was measured, or for a bad ``tolerance``.

        Example:
            >>> rows = [{"num_workers": w, "pin_memory": False, "samples_per_s": s}
            ...         for w, s in [(0, 900.0), (1, 1900.0), (2, 2000.0)]]
            >>> ThroughputTable(rows).recommend(tolerance=0.1)
            1
        """
        speeds: dict[int, float] = {}
        for r in self.rows:
            speed = r["samples_per_s"]
            if not math.isnan(speed):
                speeds[r["num_workers"]] = max(speed, speeds.get(r["num_workers"], speed))
        if not speeds:
            raise ValueError("recommend(): no row of this table was measured (every row skipped).")
        return choose_num_workers(speeds, tolerance)

    def _cells(self) -> list[list[str]]:
        cells = []
        for r in self.rows:
            speed = "skipped" if math.isnan(r["samples_per_s"]) else f"{r['samples_per_s']:,.0f}"
            startup = "" if math.isnan(r["startup_s"]) else f"{r['startup_s']:.3f}"
            cells.append(
                [str(r["num_workers"]), str(r["pin_memory"]), speed, str(r["batches"]), startup]
                + [r["note"]]
            )
        return cells

    def __str__(self) -> str:
        header = ["num_workers", "pin_memory", "samples/s", "batches", "startup s", "note"]
        table = [header, *self._cells()]
        widths = [max(len(row[i]) for row in table) for i in range(len(header))]
        lines = ["  ".join(cell.rjust(w) for cell, w in zip(row[:-1], widths)) for row in table]
        lines = [line + "  " + row[-1] for line, row in zip(lines, table)]
        return "\n".join(line.rstrip() for line in lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        import html

        header = "".join(
            f"<th>{h}</th>"
            for h in ["num_workers", "pin_memory", "samples/s", "batches", "startup s", "note"]
        )
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
            for row in self._cells()
        )
        return f"<table><thead><tr>{header}</tr></thead><tbody>{body}</tbody></table>"

    def plot(self, ax: Any = None) -> Any:
        """Samples per second against ``num_workers``, one line per ``pin_memory`` setting.

        Args:
            ax: a matplotlib Axes to draw on; a new figure when None.

        Returns:
            The matplotlib Axes.

        Example:
            >>> ax = table.plot()  # doctest: +SKIP
        """
        plt = need("matplotlib.pyplot", "plots", "ThroughputTable.plot")

        if ax is None:
            _, ax = plt.subplots(figsize=(5, 3.5), layout="constrained")
        for pin in sorted({r["pin_memory"] for r in self.rows}):
            rows = [
                r
                for r in self.rows
                if r["pin_memory"] == pin and not math.isnan(r["samples_per_s"])
            ]
            if rows:
                ax.plot(
                    [r["num_workers"] for r in rows],
                    [r["samples_per_s"] for r in rows],
                    marker="o",
                    label=f"pin_memory={pin}",
                )
        ax.set_xticks(sorted({r["num_workers"] for r in self.rows}))
        ax.set_xlabel("num_workers")
        ax.set_ylabel("samples / s")
        ax.set_title("DataLoader throughput")
        ax.set_ylim(bottom=0)
        if ax.lines:
            ax.legend()
        return ax


def choose_num_workers(throughput: Mapping[int, float], tolerance: float = 0.1) -> int:
    """The smallest ``num_workers`` whose measured speed is within ``tolerance`` of the best.

    Every extra worker is a process holding a copy of the dataset's Python state and a share of
    the CPU the training step also needs, so a worker count is only worth it when it is clearly
    faster: timings on a shared machine move by several percent between runs, and a count that
    beats a smaller one by less than that has not shown it is faster. A count qualifies when
    ``speed >= (1 - tolerance) * best``; the smallest qualifying count is returned, whatever the
    order of the entries. NaN speeds (settings that were skipped) are ignored. The mapping is not
    modified.

    Args:
        throughput: ``{num_workers: samples per second}``: ints >= 0 to non-negative numbers
            (or NaN), e.g. from ``loader_throughput``'s table.
        tolerance: how much slower than the best still counts as "as fast", a fraction in
            [0, 1): 0.1 accepts 10 % slower, 0 keeps only the best (ties go to fewer workers).

    Returns:
        The chosen worker count, an int.

    Raises:
        TypeError: for a ``throughput`` that is not a mapping, a key that is not an int, a speed
            that is not a number, or a ``tolerance`` that is not a number.
        ValueError: when no entry has a measured speed, for a negative worker count, a negative
            or infinite speed, or a ``tolerance`` outside [0, 1).

    Example:
        >>> choose_num_workers({0: 1000.0, 1: 1900.0, 2: 2000.0, 4: 1950.0}, tolerance=0.1)
        1
        >>> choose_num_workers({0: 1000.0, 1: 1900.0, 2: 2000.0, 4: 1950.0}, tolerance=0.0)
        2
    """
    if not isinstance(throughput, Mapping):
        raise TypeError(
            f"throughput must be a mapping {{num_workers: samples per second}}, got "
            f"{type(throughput).__name__}."
        )
    if isinstance(tolerance, bool) or not isinstance(tolerance, numbers.Real):
        raise TypeError(f"tolerance must be a number in [0, 1), got {tolerance!r}.")
    if not 0 <= tolerance < 1:
        raise ValueError(
            f"tolerance must be in [0, 1) (0.1 accepts 10 % slower than the best), got "
            f"{tolerance!r}."
        )
    measured = {}
    for workers, speed in throughput.items():
        check_int("throughput's keys (worker counts)", workers, minimum=0)
        if isinstance(speed, bool) or not isinstance(speed, numbers.Real):
            raise TypeError(
                f"throughput[{workers}] must be a number of samples per second, got {speed!r}."
            )
        if math.isnan(speed):
            continue
        if speed < 0 or math.isinf(speed):
            raise ValueError(
                f"throughput[{workers}] must be a finite number >= 0 of samples per second (or "
                f"NaN for a skipped setting), got {speed!r}."
            )
        measured[int(workers)] = float(speed)
    if not measured:
        raise ValueError(
            f"throughput has no measured entry (got {dict(throughput)!r}): measure at least one "
            "setting, e.g. with loader_throughput(...)."
        )
    floor = (1 - tolerance) * max(measured.values())
    return min(workers for workers, speed in measured.items() if speed >= floor)


def plan_num_workers(
    table: Sequence[Mapping[str, Any]],
    batch_size: int,
    step_samples_per_s: float,
    cores: int,
    tolerance: float = 0.1,
) -> int:
    """The fewest workers that train within ``tolerance`` of the fastest run the table allows.

    Each row of ``table`` is a loader measured alone: ``{"num_workers", "batch_size",
    "samples_per_s"}`` (NaN where skipped). Only rows at the run's ``batch_size`` apply, and only
    worker counts that leave the training process a core of its own (``num_workers <= cores -
    1``). For each, the run's speed is estimated from the row's speed and the step's alone, by how
    a DataLoader shares the time between loading and computing with workers and without them:
    chapter 5 of the course works that model out from a measurement (and its exercise
    ``choose_num_workers`` asks a learner to, which is why it is not spelled out here). Of the
    counts whose estimate is at least ``(1 - tolerance)`` times the best, the smallest is
    returned.

    Args:
        table: the measured rows, in any order (e.g. a ``ThroughputTable``'s ``rows`` with a
            ``batch_size`` added).
        batch_size: the run's batch size.
        step_samples_per_s: samples per second the training step processes with its data in
            memory, at ``batch_size``.
        cores: the cores the run may use (``companion.usable_cores()``).
        tolerance: how much slower than the best estimate still counts, a fraction in [0, 1).

    Returns:
        The chosen worker count.

    Raises:
        ValueError: when no measured row fits the run (its batch size and its cores), or for a
            bad ``step_samples_per_s``, ``cores`` or ``tolerance``.

    Example:
        >>> rows = [{"num_workers": w, "batch_size": 64, "samples_per_s": s}
        ...         for w, s in [(0, 600.0), (2, 1900.0), (4, 2000.0)]]
        >>> plan_num_workers(rows, batch_size=64, step_samples_per_s=1000.0, cores=4)
        2
    """
    if not isinstance(step_samples_per_s, numbers.Real) or not step_samples_per_s > 0:
        raise ValueError(
            f"step_samples_per_s must be a positive number, got {step_samples_per_s!r}."
        )
    cores = check_int("cores", cores, minimum=1)
    if isinstance(tolerance, bool) or not isinstance(tolerance, numbers.Real):
        raise TypeError(f"tolerance must be a number in [0, 1), got {tolerance!r}.")
    if not 0 <= tolerance < 1:
        raise ValueError(f"tolerance must be in [0, 1), got {tolerance!r}.")
    step = float(step_samples_per_s)
    estimates: dict[int, float] = {}
    for row in table:
        workers, speed = int(row["num_workers"]), float(row["samples_per_s"])
        if row["batch_size"] != batch_size or workers > cores - 1 or math.isnan(speed):
            continue
        # With workers, batches are prepared while the step computes: the slower sets the pace.
        # Without, the training process loads, then computes: the times per sample add up.
        if speed <= 0:
            estimate = 0.0
        elif workers == 0:
            estimate = 1 / (1 / speed + 1 / step)
        else:
            estimate = min(speed, step)
        estimates[workers] = max(estimate, estimates.get(workers, estimate))
    if not estimates:
        raise ValueError(
            f"no measured row fits a run at batch_size={batch_size} on {cores} core(s) "
            f"(num_workers <= {cores - 1}): measure that batch size, with fewer workers."
        )
    floor = (1 - tolerance) * max(estimates.values())
    return min(workers for workers, estimate in estimates.items() if estimate >= floor)


def loader_throughput(
    make_loader: Callable[..., Iterable],
    num_workers: Sequence[int] = (0, 1, 2, 4),
    pin_memory: Sequence[bool] = (False, True),
    batches: int = 50,
    device: torch.device | str | None = None,
) -> ThroughputTable:
    """Measure samples per second of a loader for each ``num_workers`` and ``pin_memory``.

    For each setting, ``make_loader(num_workers=w, pin_memory=p)`` builds a fresh loader. The
    time until its first batch is reported as ``startup_s`` (it includes starting the workers)
    and excluded from the throughput, which is measured over the next ``batches`` batches (fewer
    if the epoch ends first). With ``device``, every batch is also copied there
    (``non_blocking=pin_memory``), which is the copy that pinning speeds up. Without a CUDA-style
    accelerator, ``pin_memory=True`` rows are skipped with a note: pinning only helps
    host-to-GPU copies and PyTorch ignores it there.

    Args:
        make_loader: callable taking ``num_workers`` and ``pin_memory`` keywords, returning an
            iterable of batches (tensors, or tuples/lists/dicts of tensors).
        num_workers: worker counts to try, each an int >= 0.
        pin_memory: pin settings to try, each a bool.
        batches: batches to time per setting, after the first.
        device: optional device to copy each batch to, inside the timing.

    Returns:
        A ``ThroughputTable`` (print it, ``.plot()`` it, ``.to_dict()`` it, ``.best()``).

    Raises:
        TypeError, ValueError: for bad arguments, or a loader that yields no batch.

    Example:
        >>> ds = torch.utils.data.TensorDataset(torch.randn(512, 8), torch.randint(0, 2, (512,)))
        >>> def make_loader(num_workers, pin_memory):
        ...     return torch.utils.data.DataLoader(
        ...         ds, batch_size=32, num_workers=num_workers, pin_memory=pin_memory)
        >>> table = loader_throughput(make_loader, num_workers=(0,), pin_memory=(False,), batches=5)
        >>> table.rows[0]["batches"]
        5
    """
    if not callable(make_loader):
        raise TypeError(
            f"make_loader must be a callable like make_loader(num_workers=..., pin_memory=...) "
            f"returning a loader, got {type(make_loader).__name__}."
        )
    for w in num_workers:
        check_int("num_workers entries", w, minimum=0)
    for p in pin_memory:
        check_bool("pin_memory entries", p)
    batches = check_int("batches", batches, minimum=1)
    target = torch.device(device) if device is not None else None
    rows = []
    for w in num_workers:
        for pin in pin_memory:
            row = {"num_workers": int(w), "pin_memory": pin, "note": ""}
            if pin and not _pinning_works():
                row.update(
                    samples_per_s=float("nan"),
                    batches=0,
                    startup_s=float("nan"),
                    note="skipped: no CUDA; pinning only speeds host-to-GPU copies",
                )
                rows.append(row)
                continue
            row.update(_time_loader(make_loader, int(w), pin, batches, target))
            rows.append(row)
    return ThroughputTable(rows)


def _time_loader(
    make_loader: Callable[..., Iterable],
    num_workers: int,
    pin: bool,
    batches: int,
    device: torch.device | None,
) -> dict[str, Any]:
    def sync() -> None:
        if device is not None and device.type != "cpu":
            torch.accelerator.synchronize(device)

    start = time.perf_counter()
    iterator = iter(make_loader(num_workers=num_workers, pin_memory=pin))
    try:
        first = next(iterator)
    except StopIteration:
        raise ValueError(
            f"the loader from make_loader(num_workers={num_workers}, pin_memory={pin}) yielded no "
            "batch; give it some data."
        ) from None
    _count_samples(first)
    if device is not None:
        _move(first, device, pin)
    sync()
    measured_from = time.perf_counter()
    samples = count = 0
    for batch in iterator:
        if device is not None:
            batch = _move(batch, device, pin)
        samples += _count_samples(batch)
        count += 1
        if count == batches:
            break
    sync()
    elapsed = time.perf_counter() - measured_from
    del iterator  # shuts the workers down now rather than at garbage collection
    note = "" if count else "only one batch: nothing measured after it"
    if 0 < count < batches:
        note = f"epoch ended after {count + 1} batches"
    return {
        "samples_per_s": samples / elapsed if count else float("nan"),
        "batches": count,
        "startup_s": measured_from - start,
        "note": note,
    }
