"""What ``fit`` returns: one record per epoch, printable, plottable, and storable in a checkpoint."""

from __future__ import annotations

from dataclasses import dataclass, field

from companion._extras import need

__all__ = ["History"]


@dataclass
class History:
    """Per-epoch training record.

    Each entry of ``records`` is a plain dict: ``epoch`` (1-based), ``train_loss``, ``lr``
    (the first parameter group's; ``lr_1``, ``lr_2``, ... for the others), ``time`` (seconds)
    and, with a validation loader, ``val_loss``, ``val_accuracy`` and any other
    ``val_<metric>`` (``train_<metric>`` with ``fit(eval_train=True)``). Every column is an
    attribute: ``history.val_accuracy`` is the list over epochs.

    Attributes:
        records: one plain dict per epoch, in order (the columns above).
        interrupted: True when a signal (Ctrl-C, SIGTERM) stopped ``fit`` before
            ``num_epochs``.
        stopped_early: True when a callback (``EarlyStopping``) stopped ``fit`` before
            ``num_epochs``.

    Example:
        >>> h = History()
        >>> h.append({"epoch": 1, "train_loss": 0.9, "lr": 0.1, "time": 1.2})
        >>> h.train_loss
        [0.9]
    """

    records: list[dict] = field(default_factory=list)
    interrupted: bool = False
    stopped_early: bool = False

    def append(self, record: dict) -> None:
        self.records.append(dict(record))

    def __len__(self) -> int:
        return len(self.records)

    def column(self, name: str) -> list:
        """Values of one column, ``None`` where an epoch lacks it (e.g. ``"val_accuracy"``).

        Args:
            name: the column, e.g. ``"val_loss"``; a name no epoch has gives all None.
        """
        return [r.get(name) for r in self.records]

    def __getattr__(self, name: str) -> list:
        # every column is an attribute: history.val_accuracy, history.train_f1, history.lr_1
        if name.startswith("_") or name in ("records", "interrupted", "stopped_early"):
            raise AttributeError(name)
        if any(name in record for record in self.records):
            return self.column(name)
        if name in ("train_loss", "val_loss", "lr", "time", "epoch"):
            return self.column(name)  # the usual columns, even before the first epoch
        raise AttributeError(
            f"History has no column {name!r}; its columns are {self.columns()} (validation "
            f"columns need val_loader, metric columns metrics=...)"
        )

    def columns(self) -> list[str]:
        names: list[str] = []
        for record in self.records:
            names += [k for k in record if k not in names]
        return names

    def to_dict(self) -> dict:
        """Plain data (loads with ``weights_only=True``)."""
        return {"records": [dict(r) for r in self.records], "interrupted": self.interrupted,
                "stopped_early": self.stopped_early}  # fmt: skip

    @classmethod
    def from_dict(cls, data: dict) -> History:
        return cls(records=[dict(r) for r in data["records"]], interrupted=data["interrupted"],
                   stopped_early=data.get("stopped_early", False))  # fmt: skip

    def __str__(self) -> str:
        if not self.records:
            return "History(no epochs)"
        names = self.columns()
        rows = [[_fmt(r.get(n)) for n in names] for r in self.records]
        widths = [max(len(n), *(len(row[i]) for row in rows)) for i, n in enumerate(names)]
        lines = ["  ".join(n.rjust(w) for n, w in zip(names, widths))]
        lines += ["  ".join(c.rjust(w) for c, w in zip(row, widths)) for row in rows]
        if self.interrupted:
            lines.append("(interrupted: resume with fit(..., resume=True))")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"History({len(self.records)} epochs)\n{self}" if self.records else str(self)

    def _repr_html_(self) -> str:
        names = self.columns()
        head = "".join(f"<th>{n}</th>" for n in names)
        body = "".join(
            "<tr>" + "".join(f"<td>{_fmt(r.get(n))}</td>" for n in names) + "</tr>"
            for r in self.records
        )
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"

    def best_epoch(self, monitor: str | None = None, mode: str = "min") -> int | None:
        """The epoch (1-based) with the best ``monitor`` value, or None if it was never recorded.

        Args:
            monitor: a column; by default ``val_loss`` if recorded, else ``train_loss``.
            mode: ``"min"`` (lower is better) or ``"max"``.
        """
        if mode not in ("min", "max"):
            raise ValueError(f"mode must be 'min' or 'max', got {mode!r}")
        if monitor is None:
            monitor = (
                "val_loss"
                if any(v is not None for v in self.column("val_loss"))
                else ("train_loss")
            )
        points = [
            (r[monitor], r.get("epoch", i + 1))
            for i, r in enumerate(self.records)
            if isinstance(r.get(monitor), (int, float)) and r[monitor] == r[monitor]  # not NaN
        ]
        if not points:
            return None
        pick = min if mode == "min" else max
        return pick(points, key=lambda p: p[0])[1]

    def plot(self, path=None, logy: bool = False, *, metrics: bool = True):
        """Loss curves (train and validation) and, if present, the other metric columns.

        The best epoch (lowest validation loss, else lowest training loss) is marked.

        Args:
            path: also save the figure there (PNG, PDF or SVG, by the suffix).
            logy: a log scale for the loss axis.
            metrics: draw the second panel (validation and train-set metrics).

        Returns:
            The matplotlib ``Figure``.

        Example:
            >>> h = History([{"epoch": 1, "train_loss": 0.9}, {"epoch": 2, "train_loss": 0.5}])
            >>> fig = h.plot(logy=True)  # doctest: +SKIP
        """
        plt = need("matplotlib.pyplot", "plots", "History.plot")
        MaxNLocator = need("matplotlib.ticker", "plots", "History.plot").MaxNLocator

        skip = {"val_loss", "train_loss", "train_eval_loss"}
        extra = [n for n in self.columns() if n.startswith(("val_", "train_")) and n not in skip]
        ncols = 1 + (1 if metrics and extra else 0)
        fig, axes = plt.subplots(1, ncols, figsize=(5 * ncols, 3.5), squeeze=False)
        epochs = self.column("epoch")
        ax = axes[0][0]
        ax.plot(epochs, self.train_loss, marker="o", label="train")
        has_val = any(v is not None for v in self.val_loss)
        if has_val:
            ax.plot(epochs, self.val_loss, marker="o", label="validation")
        best = self.best_epoch()
        if best is not None:
            for axis in axes.flat:
                axis.axvline(best, color="0.5", linestyle="--", linewidth=1)
            value = self.records[epochs.index(best)]["val_loss" if has_val else "train_loss"]
            ax.plot([best], [value], marker="*", markersize=14, color="C3", linestyle="none",
                    label=f"best: epoch {best}")  # fmt: skip
        if logy:
            ax.set_yscale("log")
        ax.set(xlabel="epoch", ylabel="loss", title="Loss")
        ax.legend()
        if ncols == 2:
            ax = axes[0][1]
            for name in extra:
                label = name[4:] if name.startswith("val_") else name
                ax.plot(epochs, self.column(name), marker="o", label=label)
            ax.set(xlabel="epoch", title="Metrics (validation unless named train_)")
            ax.legend()
        for row in axes:
            for axis in row:
                axis.xaxis.set_major_locator(MaxNLocator(integer=True))  # epochs are whole
        fig.tight_layout()
        if path is not None:
            fig.savefig(path, dpi=120, bbox_inches="tight")
        return fig


def _fmt(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
