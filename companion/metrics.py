"""Metrics for ``evaluate`` and ``fit``: per-batch functions and stateful metric objects.

``metrics={name: metric}`` takes two kinds of metric:

- a function ``fn(outputs, targets) -> number`` returning the batch mean; ``evaluate``
  averages it over samples (each batch weighted by its size). Exact for per-sample quantities
  (accuracy, mean absolute error), not for ratios over the whole set (F1, precision, AUC);
- an object with ``update(outputs, targets)``, ``compute()`` and ``reset()`` - the protocol of
  torchmetrics, whose metrics work as they are. ``evaluate`` resets it, updates it with every
  batch and reports ``compute()`` over the whole set: a macro-F1 equals scikit-learn's on the
  same predictions. :class:`F1Score` is one, with no dependency.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import torch

__all__ = ["F1Score", "is_stateful"]


def is_stateful(metric) -> bool:
    """True for an object with ``update``, ``compute`` and ``reset`` (torchmetrics' protocol)."""
    return all(callable(getattr(metric, name, None)) for name in ("update", "compute", "reset"))


def check_metrics(metrics: Mapping | None) -> dict:
    if metrics is None:
        return {}
    if not isinstance(metrics, Mapping):
        raise TypeError(
            f"metrics must be a dict {{name: metric}}, got {type(metrics).__name__}; e.g. "
            f"metrics={{'f1': companion.F1Score(num_classes=10)}}"
        )
    for name, metric in metrics.items():
        if isinstance(metric, type):
            raise TypeError(
                f"metrics[{name!r}] is the class {metric.__name__}; pass an instance: "
                f"{metric.__name__}(...)"
            )
        if not (is_stateful(metric) or callable(metric)):
            raise TypeError(
                f"metrics[{name!r}] must be a function fn(outputs, targets) -> number or an "
                f"object with update(outputs, targets), compute() and reset(); got "
                f"{type(metric).__name__}"
            )
    return dict(metrics)


class MetricTotals:
    """Runs a set of metrics over one pass of a loader (used by ``evaluate``)."""

    def __init__(self, metrics: dict):
        self.stateful = {k: m for k, m in metrics.items() if is_stateful(m)}
        self.functions: dict[str, Callable] = {
            k: m for k, m in metrics.items() if k not in self.stateful
        }
        self.sums = dict.fromkeys(self.functions, 0.0)
        for metric in self.stateful.values():
            metric.reset()

    def update(self, outputs, targets, n: int) -> None:
        for name, fn in self.functions.items():
            self.sums[name] += float(fn(outputs, targets)) * n
        for metric in self.stateful.values():
            metric.update(outputs, targets)

    def results(self, samples: int) -> dict:
        out = {name: total / samples for name, total in self.sums.items()}
        for name, metric in self.stateful.items():
            out[name] = _number(metric.compute(), name)
        return {name: out[name] for name in [*self.functions, *self.stateful]}


def _number(value, name: str) -> float:
    if isinstance(value, torch.Tensor):
        if value.numel() != 1:
            raise ValueError(
                f"metrics[{name!r}].compute() returned a tensor of shape {tuple(value.shape)}; "
                f"a History column holds one number per epoch (average it, e.g. "
                f"average='macro', or report one class per metric)"
            )
        return value.item()
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(
            f"metrics[{name!r}].compute() returned a {type(value).__name__}; expected a number "
            f"or a one-element tensor"
        ) from None


class F1Score:
    """F1 over the whole set, from a confusion matrix built batch by batch.

    The prediction is ``outputs.argmax(dim=1)`` (outputs ``(N, C)`` or ``(N, C, ...)``,
    targets class indices ``(N,)`` or ``(N, ...)``). ``average="macro"`` is the unweighted
    mean of the per-class F1 over the classes that appear in the targets or the predictions,
    as scikit-learn's ``f1_score(average="macro")`` computes it; ``"micro"`` pools every
    decision (equal to accuracy for single-label data); ``"weighted"`` weights each class by
    its number of targets.

    Args:
        num_classes: number of classes C.
        average: ``"macro"``, ``"micro"`` or ``"weighted"``.

    Example:
        >>> f1 = F1Score(num_classes=3)
        >>> f1.update(torch.tensor([[2.0, 0, 0], [0, 2.0, 0], [0, 2.0, 0]]), torch.tensor([0, 1, 2]))
        >>> round(f1.compute(), 4)  # class 0: 1, class 1: 2/3, class 2: 0
        0.5556
    """

    def __init__(self, num_classes: int, average: str = "macro"):
        if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 2:
            raise ValueError(f"F1Score: num_classes must be an int >= 2, got {num_classes!r}")
        if average not in ("macro", "micro", "weighted"):
            raise ValueError(
                f"F1Score: average must be 'macro', 'micro' or 'weighted', got {average!r}"
            )
        self.num_classes, self.average = num_classes, average
        self.reset()

    def reset(self) -> None:
        self.confusion = torch.zeros(self.num_classes, self.num_classes, dtype=torch.int64)

    def update(self, outputs: torch.Tensor, targets: torch.Tensor) -> None:
        if outputs.dim() < 2 or outputs.shape[1] != self.num_classes:
            raise ValueError(
                f"F1Score(num_classes={self.num_classes}) needs outputs of shape (N, "
                f"{self.num_classes}, ...), got {tuple(outputs.shape)}"
            )
        preds = outputs.argmax(dim=1).reshape(-1).to("cpu", torch.int64)
        truth = targets.reshape(-1).to("cpu", torch.int64)
        if truth.numel() != preds.numel():
            raise ValueError(
                f"F1Score: targets {tuple(targets.shape)} do not match outputs "
                f"{tuple(outputs.shape)} (class indices, one per output row)"
            )
        pairs = truth * self.num_classes + preds
        counts = torch.bincount(pairs, minlength=self.num_classes**2)
        self.confusion += counts.reshape(self.num_classes, self.num_classes)

    def compute(self) -> float:
        confusion = self.confusion.double()
        tp = confusion.diagonal()
        fp = confusion.sum(dim=0) - tp
        fn = confusion.sum(dim=1) - tp
        if self.average == "micro":
            denominator = 2 * tp.sum() + fp.sum() + fn.sum()
            return (2 * tp.sum() / denominator).item() if denominator > 0 else 0.0
        denominator = 2 * tp + fp + fn
        present = denominator > 0
        if not present.any():
            return 0.0
        f1 = 2 * tp[present] / denominator[present]
        if self.average == "weighted":
            support = (tp + fn)[present]
            return (f1 * support).sum().item() / support.sum().item() if support.sum() else 0.0
        return f1.mean().item()

    def __repr__(self) -> str:
        return f"F1Score(num_classes={self.num_classes}, average={self.average!r})"
