"""What leak detection measured between steps, and its verdict.

:class:`LeakSample` is one measurement; :class:`LeakReport` judges a series of them and, when
something leaks, names what probably holds it and the fix. Both come from
:func:`companion.leaks.detect_leaks` and :class:`companion.leaks.LeakDetector`.
"""

from __future__ import annotations

import html
import math
from dataclasses import asdict, dataclass, field

from companion._extras import need
from companion._tables import format_shape, html_table, text_table

__all__ = ["LeakSample", "LeakReport"]

MIB = 1024 * 1024


@dataclass
class LeakSample:
    """One measurement between two steps.

    Attributes:
        step: how many measurements came before this one.
        graph_nodes: distinct autograd nodes reachable from live tensors.
        graph_tensors: live tensors that have a ``grad_fn``.
        rss_bytes: resident memory of the process (None where it cannot be read).
        cuda_bytes: memory allocated by PyTorch on all CUDA devices (None without CUDA).
        holders: what keeps those tensors alive (a variable, an attribute, a list) mapped to
            ``{"nodes", "tensors", "grad_fn", "shape"}``: the graph nodes first reached
            through it, how many tensors, and the first tensor's grad_fn and shape.
    """

    step: int
    graph_nodes: int
    graph_tensors: int
    rss_bytes: int | None
    cuda_bytes: int | None
    holders: dict[str, dict] = field(default_factory=dict)


def _growing(values: list[int], min_step: float) -> bool:
    """Grows in at least 3/4 of the intervals and by more than ``min_step`` per step overall."""
    diffs = [b - a for a, b in zip(values, values[1:], strict=False)]
    if not diffs:
        return False
    rising = sum(d > 0 for d in diffs)
    return (
        rising >= math.ceil(0.75 * len(diffs)) and (values[-1] - values[0]) / len(diffs) > min_step
    )


def _mib(n: int) -> str:
    return f"{n / MIB:.1f} MiB"


@dataclass
class LeakReport:
    """The verdict of :func:`.detect_leaks` or :meth:`.LeakDetector.report`.

    Attributes:
        samples: every :class:`LeakSample`, warm-up included.
        warmup: how many samples at the start are left out of the verdict.
        memory_threshold: growth per step (bytes) below which memory counts as stable.
        returns_graph: True when the step function returned a tensor that has a grad_fn.
    """

    samples: list[LeakSample]
    warmup: int
    memory_threshold: float
    returns_graph: bool = False

    @property
    def measured(self) -> list[LeakSample]:
        """The samples after the warm-up."""
        return self.samples[self.warmup :]

    @property
    def graph_leak(self) -> bool:
        """Autograd nodes, or tensors with a grad_fn, pile up from step to step."""
        m = self.measured
        return len(m) >= 3 and (
            _growing([s.graph_nodes for s in m], 0) or _growing([s.graph_tensors for s in m], 0)
        )

    @property
    def memory_growth(self) -> bool:
        """Process memory (or CUDA memory) grows by more than the threshold per step."""
        m = self.measured
        if len(m) < 3:
            return False
        for key in ("rss_bytes", "cuda_bytes"):
            values = [getattr(s, key) for s in m]
            if None not in values and _growing(values, self.memory_threshold):
                return True
        return False

    @property
    def leaking(self) -> bool:
        """True when a graph leak or memory growth was found."""
        return self.graph_leak or self.memory_growth

    def _holder(self) -> tuple[str, dict, int] | None:
        """The holder whose share of the graph grew the most: (description, data, growth)."""
        m = self.measured
        first, last = m[0].holders, m[-1].holders
        growth = {k: h["nodes"] - first.get(k, {"nodes": 0})["nodes"] for k, h in last.items()}
        if not growth or max(growth.values()) <= 0:
            return None
        key = max(growth, key=growth.get)
        return key, last[key], growth[key]

    def _memory_change(self) -> tuple[str, int, int] | None:
        m = self.measured
        for key, what in (("cuda_bytes", "CUDA memory"), ("rss_bytes", "process memory (RSS)")):
            values = [getattr(s, key) for s in m]
            if values and None not in values:
                return what, values[0], values[-1]
        return None

    @property
    def message(self) -> str:
        """What was found and, when something leaks, what probably holds it and the fix."""
        m = self.measured
        if len(m) < 3:
            return (
                f"Not enough steps to judge: {len(m)} measured after {self.warmup} warm-up "
                f"samples; measure at least 3 (more steps, or a smaller warmup)."
            )
        steps = len(m) - 1
        first, last = m[0], m[-1]
        parts = []
        if self.graph_leak:
            if _growing([s.graph_nodes for s in m], 0):
                parts.append(
                    f"LEAK: autograd graphs are kept alive: live autograd nodes grew from "
                    f"{first.graph_nodes} to {last.graph_nodes} over {steps} steps "
                    f"(+{(last.graph_nodes - first.graph_nodes) / steps:.0f} per step)."
                )
            if _growing([s.graph_tensors for s in m], 0):
                parts.append(
                    f"LEAK: tensors that still have a grad_fn pile up: from "
                    f"{first.graph_tensors} to {last.graph_tensors} over {steps} steps "
                    f"(a list of losses or outputs?)."
                )
            holder = self._holder()
            if holder is not None:
                key, h, grown = holder
                what = (
                    f"{h['tensors']} tensors with a grad_fn"
                    if h["tensors"] > 1
                    else f"a tensor of shape {format_shape(h['shape'])} with grad_fn={h['grad_fn']}"
                )
                parts.append(
                    f"Probably holding it: {key}, which keeps {what} reaching {h['nodes']} "
                    f"nodes (+{grown} since step {first.step})."
                )
            parts.append(
                "A tensor that still has a grad_fn is kept across steps: accumulate "
                "loss.item() instead of loss (a Python float carries no graph), store "
                "outputs.detach() (or .cpu() copies) instead of outputs, and validate under "
                "torch.no_grad()."
            )
        if self.memory_growth:
            what, a, b = self._memory_change()
            grown = f"{what} grew from {_mib(a)} to {_mib(b)} over {steps} steps"
            if self.graph_leak:
                parts.append(f"Memory grows too: {grown}.")
            else:
                parts.append(
                    f"LEAK: {grown} (+{_mib((b - a) / steps)} per step) while no autograd "
                    f"graph grows: something keeps tensors across steps (a list of outputs, a "
                    f"cache, a history). Keep only what you need, as Python numbers or small "
                    f"detached copies."
                )
        if not parts:
            change = self._memory_change()
            mem = f", {change[0]} changed by {_mib(change[2] - change[1])}" if change else ""
            parts.append(
                f"OK: no leak over {steps} steps: live autograd nodes stayed at "
                f"{last.graph_nodes}{mem}."
            )
        if self.returns_graph:
            parts.append(
                "Note: the step function returns a tensor that has a grad_fn; return "
                "loss.item() so that callers cannot keep the graph alive."
            )
        return "\n".join(parts)

    def _cells(self):
        headers = ["step", "graph nodes", "tensors with grad_fn", "RSS", "CUDA"]
        rows = [
            [
                str(s.step) + (" (warm-up)" if i < self.warmup else ""),
                str(s.graph_nodes),
                str(s.graph_tensors),
                "-" if s.rss_bytes is None else _mib(s.rss_bytes),
                "-" if s.cuda_bytes is None else _mib(s.cuda_bytes),
            ]
            for i, s in enumerate(self.samples)
        ]
        return headers, rows

    def __str__(self) -> str:
        return self.message + "\n\n" + text_table(*self._cells())

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        color = "#b00" if self.leaking else "#070"
        msg = html.escape(self.message).replace("\n", "<br>")
        return f"<p style='color:{color}'>{msg}</p>" + html_table(*self._cells())

    def to_dict(self) -> dict:
        """Plain data: the verdict, the message and every sample."""
        return {
            "leaking": self.leaking,
            "graph_leak": self.graph_leak,
            "memory_growth": self.memory_growth,
            "message": self.message,
            "warmup": self.warmup,
            "samples": [asdict(s) for s in self.samples],
        }

    def plot(self, ax=None):
        """Plot graph nodes (left axis) and memory in MiB (right axis) per step; returns Axes."""
        plt = need("matplotlib.pyplot", "plots", "LeakReport.plot")

        if ax is None:
            _, ax = plt.subplots(figsize=(6, 3.5))
        steps = [s.step for s in self.samples]
        ax.plot(steps, [s.graph_nodes for s in self.samples], "o-", color="C0")
        ax.set_xlabel("step")
        ax.set_ylabel("live autograd nodes", color="C0")
        if self.warmup:
            ax.axvspan(steps[0] - 0.5, steps[self.warmup - 1] + 0.5, color="#eeeeee")
        change = self._memory_change()
        if change is not None:
            key = "cuda_bytes" if change[0] == "CUDA memory" else "rss_bytes"
            twin = ax.twinx()
            twin.plot(steps, [getattr(s, key) / MIB for s in self.samples], "s--", color="C1")
            twin.set_ylabel(f"{change[0]} (MiB)", color="C1")
        ax.set_title("leak check: " + ("LEAKING" if self.leaking else "OK"))
        return ax
