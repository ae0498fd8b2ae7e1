"""The 16-sample habit: push a few samples through the whole cycle before a long run.

:func:`smoke_test` runs forward, loss, backward, an optimizer step, evaluation, a checkpoint
save and load, and a short overfitting run on ``n`` samples, and reports each stage. A model
that cannot overfit 16 samples will not learn the full dataset either, and every stage that
breaks here would have broken an hour into the real run.
"""

from __future__ import annotations

import copy
import html
import math
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch import nn
from torch.utils.data import Dataset, TensorDataset, default_collate

from companion._extras import need
from companion.batches import forward, model_device, move_to
from companion.checkpoint import load_checkpoint, save_checkpoint
from companion.loop import evaluate

__all__ = ["STAGES", "StageResult", "SmokeReport", "SmokeTestError", "smoke_test"]

PASS, FAIL, SKIP = "PASS", "FAIL", "SKIP"
STAGES = ("data", "forward", "loss", "backward", "step", "evaluate", "checkpoint", "overfit")
_NEEDS = {
    "forward": "data",
    "loss": "forward",
    "backward": "loss",
    "step": "backward",
    "evaluate": "loss",
    "checkpoint": "forward",
    "overfit": "backward",  # a step that changed nothing still lets overfit show the lr
}


class SmokeTestError(RuntimeError):
    """Raised by :meth:`SmokeReport.raise_if_failed`; ``.report`` holds the report."""

    def __init__(self, report: SmokeReport):
        super().__init__(str(report))
        self.report = report


@dataclass
class StageResult:
    """One stage of the smoke test: ``status`` is ``"PASS"``, ``"FAIL"`` or ``"SKIP"``.

    ``error`` is the exception the stage raised, if any (not part of ``to_dict()``).
    """

    stage: str
    status: str
    detail: str
    seconds: float = 0.0
    error: BaseException | None = field(default=None, repr=False)


@dataclass
class SmokeReport:
    """What :func:`smoke_test` found, stage by stage.

    Attributes:
        stages: the :class:`StageResult` list, in :data:`STAGES` order.
        n: samples used.
        device: where they ran.
        losses: the training loss after every overfitting step (for :meth:`plot`).
    """

    stages: list[StageResult]
    n: int
    device: str
    losses: list[float] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every stage passed."""
        return all(s.status == PASS for s in self.stages)

    @property
    def failed(self) -> StageResult | None:
        """The first stage that failed, or None."""
        return next((s for s in self.stages if s.status == FAIL), None)

    def __getitem__(self, stage: str) -> StageResult:
        for result in self.stages:
            if result.stage == stage:
                return result
        raise KeyError(f"no stage {stage!r}; stages are {list(STAGES)}")

    def _headline(self) -> str:
        took = sum(s.seconds for s in self.stages)
        where = f"Smoke test on {self.n} samples ({self.device})"
        if self.ok:
            return f"{where}: PASSED, {len(self.stages)} stages in {took:.2f} s"
        first = self.failed
        return f"{where}: FAILED at {first.stage}: {first.detail}"

    def __str__(self) -> str:
        lines = [self._headline()]
        for s in self.stages:
            lines.append(f"  {s.status:<4}  {s.stage:<10}  {s.detail}  ({s.seconds:.2f} s)")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        colors = {PASS: "#070", FAIL: "#b00", SKIP: "#777"}
        rows = "".join(
            f"<tr><td style='color:{colors[s.status]}'><b>{s.status}</b></td>"
            f"<td>{s.stage}</td><td>{html.escape(s.detail)}</td><td>{s.seconds:.2f} s</td></tr>"
            for s in self.stages
        )
        return f"<p><b>{html.escape(self._headline())}</b></p><table><tbody>{rows}</tbody></table>"

    def to_dict(self) -> dict:
        """Plain data: ``{"ok", "n", "device", "stages": [dict, ...], "losses"}``."""
        return {
            "ok": self.ok,
            "n": self.n,
            "device": self.device,
            "stages": [
                {"stage": s.stage, "status": s.status, "detail": s.detail, "seconds": s.seconds}
                for s in self.stages
            ],
            "losses": list(self.losses),
        }

    def raise_if_failed(self) -> SmokeReport:
        """Raise :class:`SmokeTestError` if a stage failed; return the report otherwise."""
        if not self.ok:
            raise SmokeTestError(self)
        return self

    def plot(self, ax=None):
        """Plot the overfitting loss per step (log scale); returns the matplotlib Axes."""
        plt = need("matplotlib.pyplot", "plots", "SmokeReport.plot")

        if ax is None:
            _, ax = plt.subplots(figsize=(6, 3.5))
        ax.plot(range(1, len(self.losses) + 1), self.losses, marker=".")
        if self.losses and min(self.losses) > 0:
            ax.set_yscale("log")
        ax.set_xlabel("step")
        ax.set_ylabel("training loss")
        ax.set_title(f"overfitting {self.n} samples: {self['overfit'].status}")
        return ax


def _first_line(err: BaseException) -> str:
    lines = str(err).strip().splitlines()
    return f"{type(err).__name__}: {lines[0] if lines else ''}".strip()


def _describe(obj) -> str:
    if isinstance(obj, torch.Tensor):
        return f"{tuple(obj.shape)} {str(obj.dtype).replace('torch.', '')}"
    if isinstance(obj, (list, tuple)):
        return "(" + ", ".join(_describe(o) for o in obj) + ")"
    if isinstance(obj, dict):
        return "{" + ", ".join(f"{k}: {_describe(v)}" for k, v in obj.items()) + "}"
    return type(obj).__name__


def _lrs(optimizer: torch.optim.Optimizer) -> str:
    values = sorted({g.get("lr") for g in optimizer.param_groups}, key=str)
    return ", ".join(f"lr={v:g}" if isinstance(v, (int, float)) else f"lr={v}" for v in values)


def _hint(stage: str, err: BaseException) -> str:
    from companion.env import diagnose

    text = str(err)
    if stage in ("forward", "loss") and any(
        word in text for word in ("shape", "size", "mat1", "dimension")
    ):
        if stage == "forward":
            return "trace the layers with companion.debug.trace_shapes(model, inputs)"
        return (
            "outputs and targets do not fit the loss: for cross_entropy, outputs (N, C) and "
            "int64 class indices (N,); for mse_loss, equal shapes"
        )
    found = diagnose(err)
    if found.key == "device_mismatch":
        return "companion.debug.find_device_mismatches(model, inputs) lists the stragglers"
    if found.known:
        return found.fix
    return {
        "data": "check the dataset's __getitem__ (it must return (input, target))",
        "loss": "check that loss_fn accepts (outputs, targets) in that order",
    }.get(stage, "")


class _Run:
    """The state carried from stage to stage; one method per stage returns (status, detail)."""

    def __init__(self, model, dataset, loss_fn, optimizer, device, n, steps, batch_size,
                 collate_fn, seed, loss_ratio):  # fmt: skip
        self.model, self.dataset, self.loss_fn, self.optimizer = model, dataset, loss_fn, optimizer
        self.device, self.n, self.steps, self.batch_size = device, n, steps, batch_size
        self.collate_fn, self.seed, self.loss_ratio = collate_fn, seed, loss_ratio
        self.losses: list[float] = []
        self.hard_step_failure = False

    def trainable(self) -> list[tuple[str, nn.Parameter]]:
        return [(k, p) for k, p in self.model.named_parameters() if p.requires_grad]

    def data(self):
        size = len(self.dataset)
        if size == 0:
            return FAIL, "the dataset is empty"
        order = torch.randperm(size, generator=torch.Generator().manual_seed(self.seed))
        self.indices = order[: self.n].tolist()
        batch = (self.collate_fn or default_collate)([self.dataset[i] for i in self.indices])
        if not (isinstance(batch, (tuple, list)) and len(batch) == 2):
            return FAIL, (
                f"a batch must be an (inputs, targets) pair, got {_describe(batch)}: make "
                f"__getitem__ return (input, target)"
            )
        self.inputs, self.targets = (
            move_to(batch[0], self.device, False),
            move_to(batch[1], self.device, False),
        )
        few = f" (the dataset has only {size})" if size < self.n else ""
        self.n = len(self.indices)
        return PASS, (
            f"{self.n} samples{few}: inputs {_describe(self.inputs)}, "
            f"targets {_describe(self.targets)}"
        )

    def forward(self):
        self.model.train()
        self.outputs = forward(self.model, self.inputs)
        if isinstance(self.outputs, torch.Tensor) and not torch.isfinite(self.outputs).all():
            return FAIL, (
                "the outputs contain NaN or inf before any training: check the inputs "
                "(normalized? any NaN in the data?) and the initialization"
            )
        return PASS, f"outputs {_describe(self.outputs)}"

    def loss(self):
        try:
            self.loss_value = loss = self.loss_fn(self.outputs, self.targets)
        except Exception:
            too_few = self._too_few_classes()
            if too_few:
                return FAIL, too_few
            raise
        if not isinstance(loss, torch.Tensor):
            return FAIL, (
                f"loss_fn returned a {type(loss).__name__}, not a tensor: return the tensor, "
                f"not loss.item(), so that backward can run"
            )
        if loss.numel() != 1:
            return FAIL, (
                f"loss_fn returned shape {tuple(loss.shape)}; reduce it to one number "
                f"(reduction='mean', or .mean())"
            )
        if not torch.isfinite(loss):
            return FAIL, f"the loss is {loss.item()} on the first batch: check inputs and targets"
        self.initial_loss = loss.item()
        return PASS, f"loss {self.initial_loss:.4g}"

    def _too_few_classes(self) -> str:
        """Class indices beyond the model's outputs: the last layer is too narrow."""
        outputs, targets = self.outputs, self.targets
        if not (isinstance(outputs, torch.Tensor) and isinstance(targets, torch.Tensor)):
            return ""
        if outputs.ndim < 2 or targets.is_floating_point() or targets.numel() == 0:
            return ""
        largest, classes = int(targets.max()), outputs.shape[1]
        if largest < classes:
            return ""
        return (
            f"the targets hold class indices up to {largest}, but the model gives {classes} "
            f"scores per sample (outputs {tuple(outputs.shape)}): the last layer needs one "
            f"output per class (out_features >= {largest + 1}), or the labels are not 0..C-1"
        )

    def backward(self):
        loss = self.loss_value
        if loss.grad_fn is None:
            return FAIL, (
                "no parameter received a gradient: the loss has no grad_fn - is the loss "
                "detached? (.detach(), a tensor rebuilt from .item(), torch.no_grad() in "
                "forward, or every parameter frozen)"
            )
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        params = self.trainable()
        if not params:
            return FAIL, "the model has no trainable parameters (requires_grad is False on all)"
        missing = [k for k, p in params if p.grad is None]
        if len(missing) == len(params):
            return FAIL, (
                "no parameter received a gradient - is the loss detached from the model's outputs?"
            )
        bad = [k for k, p in params if p.grad is not None and not torch.isfinite(p.grad).all()]
        if bad:
            return FAIL, f"gradients contain NaN or inf in {', '.join(bad[:4])}"
        norm = torch.stack(
            [p.grad.detach().float().norm() for _, p in params if p.grad is not None]
        )
        detail = f"{len(params) - len(missing)} of {len(params)} parameter tensors got a "
        detail += f"gradient, total norm {norm.norm().item():.3g}"
        if missing:
            detail += f"; none for {', '.join(missing[:4])} (not used in forward?)"
        return PASS, detail

    def step(self):
        params = [p for _, p in self.trainable()]
        held = {id(p) for group in self.optimizer.param_groups for p in group["params"]}
        mine = [p for p in params if id(p) in held]
        if not mine:
            self.hard_step_failure = True
            return FAIL, (
                "the optimizer holds none of the model's parameters: create it from this model, "
                "after moving it: optimizer = torch.optim.SGD(model.parameters(), lr=...)"
            )
        before = [p.detach().clone() for p in mine]
        self.optimizer.step()
        if not all(torch.isfinite(p).all() for p in mine):
            self.hard_step_failure = True
            return FAIL, (
                f"parameters became NaN or inf after one step: is the learning rate too high "
                f"({_lrs(self.optimizer)})?"
            )
        changed = sum(not torch.equal(a, p) for a, p in zip(before, mine, strict=True))
        if changed == 0:
            return FAIL, (
                f"optimizer.step() changed no parameter ({_lrs(self.optimizer)}): is the "
                f"learning rate 0, or were the gradients cleared before the step?"
            )
        detail = f"{changed} of {len(params)} parameter tensors changed ({_lrs(self.optimizer)})"
        if len(mine) < len(params):
            detail += f"; the optimizer holds only {len(mine)} of them"
        return PASS, detail

    def evaluate(self):
        result = evaluate(
            self.model, [(self.inputs, self.targets)], self.loss_fn, device=self.device
        )
        if not math.isfinite(result["loss"]):
            return FAIL, f"the evaluation loss is {result['loss']}"
        detail = f"loss {result['loss']:.4g} in eval mode, under torch.inference_mode()"
        if "accuracy" in result:
            detail += f", accuracy {result['accuracy']:.0%}"
        return PASS, detail

    @torch.no_grad()
    def eval_outputs(self):
        modes = {m: m.training for m in self.model.modules()}
        self.model.eval()
        try:
            return forward(self.model, self.inputs)
        finally:
            for module, mode in modes.items():
                module.train(mode)

    def checkpoint(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = save_checkpoint(
                Path(tmp) / "smoke.pt", model=self.model, optimizer=self.optimizer
            )
            size = path.stat().st_size
            reference = self.eval_outputs()
            with torch.no_grad():
                for p in self.model.parameters():
                    p.add_(torch.randn_like(p))
            moved = not _same(self.eval_outputs(), reference)
            load_checkpoint(path, model=self.model, optimizer=self.optimizer, restore_rng=False)
            reloaded = self.eval_outputs()
        if not _same(reloaded, reference):
            return FAIL, (
                "the reloaded model gives different outputs: some state lives outside the "
                "state_dict (a plain tensor attribute or Python number changed by training? "
                "register it with register_buffer)"
            )
        what = "outputs identical after reload" if moved else "reloaded (no parameters to check)"
        return PASS, f"saved {size / 1024:.1f} KiB (model + optimizer), {what}"

    def eval_loss(self) -> tuple[float, float | None]:
        outputs = self.eval_outputs()
        loss = float(self.loss_fn(outputs, self.targets))
        accuracy = None
        if (
            isinstance(outputs, torch.Tensor)
            and isinstance(self.targets, torch.Tensor)
            and outputs.dim() >= 2
            and not self.targets.is_floating_point()
            and self.targets.shape == outputs.shape[:1] + outputs.shape[2:]
        ):
            accuracy = (outputs.argmax(dim=1) == self.targets).float().mean().item()
        return loss, accuracy

    def batches(self):
        if self.batch_size is None or self.batch_size >= self.n:
            return [(self.inputs, self.targets)]
        items = [self.dataset[i] for i in self.indices]
        collate = self.collate_fn or default_collate
        return [
            tuple(move_to(x, self.device, False) for x in collate(items[i : i + self.batch_size]))
            for i in range(0, self.n, self.batch_size)
        ]

    def overfit(self):
        if self.hard_step_failure:
            return SKIP, "skipped: the optimizer step failed"
        start, start_acc = self.eval_loss()
        batches = self.batches()
        self.model.train()
        loss, accuracy = start, start_acc
        for step in range(1, self.steps + 1):
            for inputs, targets in batches:
                self.optimizer.zero_grad(set_to_none=True)
                train_loss = self.loss_fn(forward(self.model, inputs), targets)
                train_loss.backward()
                self.optimizer.step()
            self.losses.append(train_loss.item())
            if not math.isfinite(self.losses[-1]):
                return FAIL, (
                    f"the loss became {self.losses[-1]} at step {step}: the learning rate is "
                    f"probably too high ({_lrs(self.optimizer)})"
                )
            loss, accuracy = self.eval_loss()
            if (accuracy is not None and accuracy >= 1.0) or (
                start > 0 and loss <= start / self.loss_ratio
            ):
                acc = f", accuracy {accuracy:.0%}" if accuracy is not None else ""
                return PASS, f"loss went from {start:.3g} to {loss:.3g} in {step} steps{acc}"
        acc = f", accuracy {start_acc:.0%} -> {accuracy:.0%}" if accuracy is not None else ""
        goal = f"a {self.loss_ratio:g}x lower loss" + (
            " or 100% accuracy" if accuracy is not None else ""
        )
        return FAIL, (
            f"loss went from {start:.3g} to {loss:.3g} in {self.steps} steps{acc} (expected "
            f"{goal}) - learning rate too low ({_lrs(self.optimizer)}), or the model cannot "
            f"fit {self.n} samples (too small, a bug in forward, targets that do not match "
            f"the inputs); try more steps or a higher lr"
        )


def _same(a, b) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and torch.allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
        return all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        return all(_same(a[k], b[k]) for k in a)
    return a == b


def _as_dataset(dataset):
    if isinstance(dataset, (tuple, list)) and len(dataset) == 2:
        if all(isinstance(t, torch.Tensor) for t in dataset):
            return TensorDataset(*dataset)
    if isinstance(dataset, Dataset) or (
        hasattr(dataset, "__len__") and hasattr(dataset, "__getitem__")
    ):
        return dataset
    raise TypeError(
        f"dataset must be a map-style Dataset (with __len__ and __getitem__ returning "
        f"(input, target)) or an (inputs, targets) pair of tensors, got {type(dataset).__name__}"
    )


def smoke_test(
    model: nn.Module,
    dataset,
    optimizer: torch.optim.Optimizer,
    loss_fn: Callable,
    *,
    n: int = 16,
    steps: int = 200,
    device: str | torch.device = "auto",
    batch_size: int | None = None,
    collate_fn: Callable | None = None,
    loss_ratio: float = 10.0,
    seed: int = 0,
    restore: bool = True,
) -> SmokeReport:
    """Run the whole training cycle on ``n`` samples and check that the model can overfit them.

    The stages, in order (a stage whose input failed is SKIPped):

    - ``data``: ``n`` samples drawn by ``seed`` and collated into one batch;
    - ``forward``: ``model(inputs)`` in train mode (finite outputs);
    - ``loss``: ``loss_fn(outputs, targets)`` is one finite number;
    - ``backward``: the parameters receive finite gradients;
    - ``step``: ``optimizer.step()`` changes them;
    - ``evaluate``: :func:`companion.evaluate` runs in eval mode;
    - ``checkpoint``: :func:`companion.save_checkpoint` and :func:`companion.load_checkpoint`
      through a temporary folder; the reloaded model gives the same outputs;
    - ``overfit``: up to ``steps`` steps on the samples must bring the loss down
      ``loss_ratio`` times, or (classification) reach 100% accuracy on them.

    The arguments come in ``fit``'s order: ``(model, data, optimizer, loss_fn)``. The model
    is used where it is (``model.to(device)`` first); batches are moved to ``device``. With ``restore=True`` the model's weights, the optimizer's state, every
    module's train/eval mode and the random generators are put back afterwards (gradients
    are cleared), so the real run starts from where it would have without the test.

    Args:
        model: the model, already on its device.
        dataset: a map-style Dataset of ``(input, target)`` pairs, or a pair of tensors.
        optimizer: an optimizer over ``model``'s parameters.
        loss_fn: ``loss_fn(outputs, targets) -> scalar tensor``.
        n: samples to use.
        steps: most overfitting steps (it stops as soon as the goal is met).
        device: where batches go; ``"auto"``: the device of the model's parameters.
        batch_size: split the samples into batches of this size (default: one batch).
        collate_fn: how to batch samples (default: ``default_collate``).
        loss_ratio: how many times lower the loss must get to count as overfitting.
        seed: picks the samples and seeds the random generators during the test.
        restore: put the model, optimizer and generators back afterwards.

    Returns:
        A :class:`SmokeReport`: ``report.ok``, ``report.failed`` (the first failing stage,
        whose ``detail`` says why), ``report["overfit"]``, ``print(report)``,
        ``report.raise_if_failed()``.

    Raises:
        TypeError: if an argument has the wrong type (model, dataset, optimizer, loss_fn),
            or the optimizer and the loss come in the old order ``(..., loss_fn, optimizer)``.
        ValueError: if ``n``, ``steps``, ``batch_size`` or ``loss_ratio`` is out of range.

    Example:
        >>> model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
        >>> data = (torch.randn(32, 4), torch.randint(0, 3, (32,)))
        >>> optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
        >>> smoke_test(model, data, optimizer, nn.CrossEntropyLoss()).ok
        True
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    dataset = _as_dataset(dataset)
    if isinstance(loss_fn, torch.optim.Optimizer) and not isinstance(
        optimizer, torch.optim.Optimizer
    ):
        raise TypeError(
            f"smoke_test takes (model, data, optimizer, loss_fn), the order of fit, but the "
            f"third argument is a {type(optimizer).__name__} and the fourth a "
            f"{type(loss_fn).__name__}: the old order (loss_fn, optimizer). Swap them, or pass "
            f"keywords: smoke_test(model, data, optimizer=optimizer, loss_fn=loss_fn)"
        )
    if not callable(loss_fn):
        raise TypeError(f"loss_fn must be callable(outputs, targets), got {type(loss_fn).__name__}")
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise TypeError(
            f"optimizer must be a torch.optim.Optimizer, got {type(optimizer).__name__}; "
            f"e.g. torch.optim.Adam(model.parameters(), lr=1e-3)"
        )
    for name, value in (("n", n), ("steps", steps), ("batch_size", batch_size)):
        if value is None and name == "batch_size":
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if not isinstance(loss_ratio, (int, float)) or not loss_ratio > 1:
        raise ValueError(
            f"loss_ratio must be a number > 1 (how many times lower), got {loss_ratio!r}"
        )
    device = model_device(model, device)

    saved = None
    if restore:
        modes = {m: m.training for m in model.modules()}
        saved = (copy.deepcopy(model.state_dict()), copy.deepcopy(optimizer.state_dict()))
    cuda = []
    if device.type == "cuda":
        cuda = [torch.cuda.current_device() if device.index is None else device.index]
    run = _Run(model, dataset, loss_fn, optimizer, device, n, steps, batch_size, collate_fn,
               seed, loss_ratio)  # fmt: skip
    results: dict[str, StageResult] = {}
    try:
        with torch.random.fork_rng(devices=cuda, enabled=restore):
            torch.manual_seed(seed)
            for stage in STAGES:
                need = _NEEDS.get(stage)
                if need is not None and results[need].status != PASS:
                    results[stage] = StageResult(stage, SKIP, f"skipped: {need} did not pass")
                    continue
                start = time.perf_counter()
                try:
                    status, detail = getattr(run, stage)()
                    error = None
                except Exception as err:
                    hint = _hint(stage, err)
                    status, error = FAIL, err
                    detail = _first_line(err) + (f" - {hint}" if hint else "")
                    run.hard_step_failure |= stage == "step"
                took = time.perf_counter() - start
                results[stage] = StageResult(stage, status, detail, took, error)
    finally:
        if saved is not None:
            model.load_state_dict(saved[0])
            optimizer.load_state_dict(saved[1])
            optimizer.zero_grad(set_to_none=True)
            for module, mode in modes.items():
                module.train(mode)
    return SmokeReport([results[s] for s in STAGES], run.n, str(device), run.losses)
