# Corpus: transcriber (issue 39): every exercise that has a companion counterpart, answered with the
# companion's own source as inspect.getsource shows it, helpers it calls pasted above it, imports
# added. Where the exercise asks what the companion does (most of them), that still earns the
# points: the flag is what stops it. Where it asks for another signature or policy, it loses them.
# review: matches companion
# %% ch04_residual_block points=3 feedback="passed"
import torch
from torch import nn


class ResidualBlock(nn.Module):
    """A residual block that starts as the identity: ``branch(x) + shortcut(x)``.

    ``branch`` is conv3x3 (with ``stride``) -> batch norm -> ReLU -> conv3x3 -> batch norm, the
    convolutions without bias (each batch norm has its own shift). The last batch norm's scale
    starts at zero, so a new block adds nothing to its shortcut: where the input already has the
    output's shape, the block is the identity (its output and its gradient, in train and eval
    mode), and a stack of any depth starts as the identity and learns from there; no ReLU
    follows the sum, which would cut the negative half of ``x``. ``shortcut`` is
    ``nn.Identity()`` where the input already has the output's shape, and a projection (a 1x1
    convolution with ``stride``, then batch norm) where channels or resolution change.

    Args:
        in_channels: input channels.
        out_channels: output channels (default: ``in_channels``).
        stride: 1 keeps height and width, 2 halves them (rounding up).

    Raises:
        ValueError: if a channel count or the stride is not a positive int.

    Example:
        >>> x = torch.randn(2, 4, 6, 6)
        >>> torch.equal(ResidualBlock(4)(x), x)  # a new block that keeps the shape
        True
        >>> tuple(ResidualBlock(4, 8, stride=2)(torch.randn(2, 4, 7, 7)).shape)
        (2, 8, 4, 4)
    """

    def __init__(self, in_channels: int, out_channels: int | None = None, stride: int = 1) -> None:
        super().__init__()
        out_channels = in_channels if out_channels is None else out_channels
        for name, value in (
            ("in_channels", in_channels),
            ("out_channels", out_channels),
            ("stride", stride),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        self.branch = nn.Sequential(
            nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(),
            nn.Conv2d(out_channels, out_channels, 3, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
        )
        # A zero scale makes the branch's output zero in train and eval mode alike (batch norm's
        # shift starts at zero), and the scale's own gradient is not zero: it learns at once.
        nn.init.zeros_(self.branch[-1].weight)
        if in_channels == out_channels and stride == 1:
            self.shortcut: nn.Module = nn.Identity()
        else:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_channels, out_channels, 1, stride=stride, bias=False),
                nn.BatchNorm2d(out_channels),
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.branch(x) + self.shortcut(x)

# %% ch04_train_one_epoch points=0 feedback="expected train_one_epoch(model, loader, optimizer, loss_fn, device)"
import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from functools import partial
import torch
from torch import nn
import contextlib
from collections.abc import Mapping
from torch.utils.data import Dataset


class NonFiniteLossError(FloatingPointError):
    """The loss became NaN or infinite during training."""


_SETTLE_EVERY = 4096  # steps whose losses may wait on the device before they are read


def _nonfinite_message(value: float, epoch: int, batch: int, late: bool = False) -> str:
    when = (
        " (read when the losses were next collected: the steps after it were taken, so the "
        "weights may hold NaN; no checkpoint was written after it)"
        if late
        else ""
    )
    return (
        f"the loss is {value} in epoch {epoch + 1}, batch {batch + 1}{when}. "
        f"Usual causes: a learning rate too high, log() or division of zero, fp16 "
        f"overflow without a scaler, bad inputs (check torch.isfinite(inputs)). "
        f"Pass skip_nonfinite=True to skip such steps instead."
    )


@dataclass
class _Tally:
    """Running totals of one epoch; plain values so a mid-epoch checkpoint can hold them.

    The losses of the steps since the last :meth:`settle` stay on the device, unread: reading a
    GPU tensor waits for every queued step to finish. ``settle`` reads them in one transfer
    and folds them in on the host, in order, exactly as reading each step would.
    """

    loss_sum: float = 0.0
    samples: int = 0
    batches: int = 0  # batches consumed this epoch
    steps: int = 0  # optimizer steps taken
    skipped: int = 0  # steps skipped (non-finite loss, or the fp16 scaler found inf/NaN)

    def __post_init__(self) -> None:
        # per step: (first batch index, [(detached loss, samples), ...]), not yet read
        self._pending: list[tuple[int, list]] = []
        self.epoch = 0  # for the error message

    def defer(self, first_batch: int, losses: list) -> None:
        self._pending.append((first_batch, losses))
        if len(self._pending) >= _SETTLE_EVERY:  # bounds the device memory they hold
            self.settle()

    def settle(self) -> None:
        """Read the unread losses (one transfer) and add them up; raise at a non-finite one."""
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        values = iter(torch.stack([loss for _, group in pending for loss, _ in group]).tolist())
        for first_batch, group in pending:
            group_sum = 0.0
            for offset, (_, n) in enumerate(group):
                value = next(values)
                if not math.isfinite(value):
                    batch = first_batch + offset
                    raise NonFiniteLossError(_nonfinite_message(value, self.epoch, batch, True))
                group_sum += value * n
            self.loss_sum += group_sum

    @property
    def mean_loss(self) -> float:
        self.settle()
        return self.loss_sum / self.samples if self.samples else math.nan

    def state(self) -> dict:
        """The plain values a checkpoint holds (after reading what is pending)."""
        self.settle()
        return asdict(self)


AMP_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


def check_amp(amp: str | None) -> str | None:
    """Validate an ``amp`` argument: ``None``, ``"bf16"`` or ``"fp16"``.

    Raises:
        ValueError: for any other value, naming the accepted ones.
    """
    if amp is None or (isinstance(amp, str) and amp in AMP_DTYPES):
        return amp
    raise ValueError(
        f"amp must be None, 'bf16' or 'fp16', got {amp!r}. "
        f"Use 'bf16' where the hardware supports it (no scaler needed), 'fp16' with a GradScaler."
    )


def _check_args(accumulate, clip_grad_norm, amp):
    if isinstance(accumulate, bool) or not isinstance(accumulate, int) or accumulate < 1:
        raise ValueError(
            f"accumulate must be an int >= 1 (micro-batches per step), got {accumulate!r}"
        )
    if clip_grad_norm is not None and not (
        isinstance(clip_grad_norm, (int, float)) and clip_grad_norm > 0
    ):
        raise ValueError(
            f"clip_grad_norm must be None or a positive number, got {clip_grad_norm!r}"
        )
    check_amp(amp)


def check_loader(loader, name: str) -> None:
    """A loader, not a Dataset, and not empty (when it knows its length)."""
    if isinstance(loader, Dataset) and not isinstance(loader, torch.utils.data.IterableDataset):
        raise TypeError(
            f"{name} is a {type(loader).__name__}, a Dataset: iterating it gives single "
            f"samples, not batches. Wrap it in a DataLoader: DataLoader(dataset, "
            f"batch_size=64, shuffle={name == 'train_loader'})"
        )
    if not (hasattr(loader, "__iter__") or hasattr(loader, "__getitem__")):
        raise TypeError(
            f"{name} must be iterable, yielding (inputs, targets) batches; got "
            f"{type(loader).__name__}"
        )
    try:
        size = len(loader)
    except TypeError:  # an iterable of unknown length: checked when it ends
        return
    if size == 0:
        dataset = getattr(loader, "dataset", None)
        detail = ""
        if dataset is not None and hasattr(dataset, "__len__"):
            detail = (
                f" (its dataset has {len(dataset)} samples, batch_size="
                f"{getattr(loader, 'batch_size', '?')}, drop_last={getattr(loader, 'drop_last', '?')})"
            )
        raise ValueError(f"{name} yields no batches{detail}; is the dataset empty?")


def check_loss_fn(loss_fn) -> None:
    if isinstance(loss_fn, type):
        raise TypeError(
            f"loss_fn is the class {loss_fn.__name__}; pass an instance: {loss_fn.__name__}()"
        )
    if not callable(loss_fn):
        raise TypeError(
            f"loss_fn must be callable as loss_fn(outputs, targets), got {type(loss_fn).__name__}"
        )
    reduction = getattr(loss_fn, "reduction", "mean")
    if reduction in ("sum", "none"):
        raise ValueError(
            f"loss_fn has reduction={reduction!r}; the loop needs the mean over the batch (it "
            f"reports per-sample means and weights batches by their size): use "
            f"{type(loss_fn).__name__}() with reduction='mean', the default"
        )


def check_model(model) -> None:
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")


def check_optimizer(optimizer, model: nn.Module, loss_fn=None) -> None:
    """The optimizer exists and updates this model's parameters (not another model's)."""
    if optimizer is None:
        raise TypeError(
            "optimizer is None; build one on this model's parameters, e.g. "
            "torch.optim.SGD(model.parameters(), lr=0.1)"
        )
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise TypeError(
            f"optimizer must be a torch.optim.Optimizer, got {type(optimizer).__name__}"
        )
    owned = {id(p) for p in model.parameters()}
    if isinstance(loss_fn, nn.Module):  # a loss with learnable weights is trained too
        owned |= {id(p) for p in loss_fn.parameters()}
    given = [p for group in optimizer.param_groups for p in group["params"]]
    if owned and given and not any(id(p) in owned for p in given):
        raise ValueError(
            f"optimizer holds {len(given)} parameter tensors, none of them this model's: it "
            f"was built on another model (or on a copy made before this one), so training "
            f"would change nothing. Build it after the model: "
            f"{type(optimizer).__name__}(model.parameters(), ...)"
        )


def check_scheduler(scheduler, optimizer) -> None:
    if scheduler is None:
        return
    own = getattr(scheduler, "optimizer", None)
    if own is not None and own is not optimizer:
        raise ValueError(
            f"scheduler ({type(scheduler).__name__}) was built on another optimizer, so it "
            f"would change the learning rate of an optimizer that does not train this model; "
            f"build it on the optimizer you pass: {type(scheduler).__name__}(optimizer, ...)"
        )


def _check_training(model, loader, optimizer, loss_fn, scheduler, loader_name: str) -> None:
    check_model(model)
    check_optimizer(optimizer, model, loss_fn)
    check_scheduler(scheduler, optimizer)
    check_loss_fn(loss_fn)
    check_loader(loader, loader_name)


class _with_inputs:
    """Marks a loss called as ``loss_fn(outputs, targets, inputs)``."""

    def __init__(self, loss_fn):
        self.loss_fn = loss_fn

    def __call__(self, outputs, targets, inputs):
        return self.loss_fn(outputs, targets, inputs)


def _describe(obj) -> str:
    if isinstance(obj, torch.Tensor):
        return f"a {str(obj.dtype).replace('torch.', '')} tensor of shape {tuple(obj.shape)}"
    if isinstance(obj, (tuple, list)):
        return f"a {type(obj).__name__} of {len(obj)}"
    return f"a {type(obj).__name__}"


def check_loss_value(loss, loss_fn, where: str) -> None:
    if not isinstance(loss, torch.Tensor):
        raise TypeError(
            f"loss_fn returned {_describe(loss)} ({where}); it must return the loss tensor "
            f"(not loss.item()) so that backward() can run"
        )
    if loss.numel() != 1:
        raise ValueError(
            f"loss_fn returned {_describe(loss)} ({where}), not one number: reduce it with "
            f"reduction='mean' or .mean() (the loop needs the batch mean)"
        )


def forward(model: nn.Module, inputs):
    """``model(inputs)``: a tuple or list is spread as arguments, a dict as keyword arguments."""
    if isinstance(inputs, torch.Tensor):
        return model(inputs)
    if isinstance(inputs, (tuple, list)):
        return model(*inputs)
    if isinstance(inputs, Mapping):
        return model(**inputs)
    return model(inputs)


def _floating_dtypes(model: nn.Module) -> set[torch.dtype]:
    return {p.dtype for p in model.parameters() if p.is_floating_point()}


def _inputs_dtypes(inputs) -> set[torch.dtype]:
    if isinstance(inputs, torch.Tensor):
        return {inputs.dtype} if inputs.is_floating_point() else set()
    if isinstance(inputs, (tuple, list)):
        return set().union(*(_inputs_dtypes(i) for i in inputs)) if inputs else set()
    if isinstance(inputs, Mapping):
        return set().union(*(_inputs_dtypes(i) for i in inputs.values())) if inputs else set()
    return set()


def forward_failed(model: nn.Module, inputs, err: Exception, where: str) -> Exception | None:
    """A clearer error for a failed forward pass, or None to let torch's error through."""
    params, given = _floating_dtypes(model), _inputs_dtypes(inputs)
    if params and given and not (given <= params) and "dtype" in str(err):
        p = ", ".join(sorted(str(d).replace("torch.", "") for d in params))
        i = ", ".join(sorted(str(d).replace("torch.", "") for d in given))
        return TypeError(
            f"the model's parameters are {p} but the inputs are {i} ({where}): keep the model "
            f"in float32 and use amp='bf16' (or 'fp16' on a GPU) for mixed precision; a "
            f".half() model does not train well on the CPU"
        )
    return None


def loss_failed(outputs, targets, loss_fn, err: Exception, where: str) -> Exception | None:
    """A clearer error for a failed loss, or None to let torch's error through."""
    name = type(loss_fn).__name__
    if isinstance(outputs, (tuple, list, Mapping)):
        return TypeError(
            f"the model returned {_describe(outputs)} ({where}), and {name} needs one tensor: "
            f"return a single tensor from forward(), or pass a loss_fn that picks the output, "
            f"e.g. lambda outputs, targets: criterion(outputs[0], targets)"
        )
    classification = isinstance(loss_fn, (nn.CrossEntropyLoss, nn.NLLLoss)) or (
        "cross_entropy" in getattr(loss_fn, "__name__", "")
    )
    if (
        classification
        and isinstance(targets, torch.Tensor)
        and targets.is_floating_point()
        and isinstance(outputs, torch.Tensor)
        and targets.shape != outputs.shape
    ):
        return TypeError(
            f"targets are {_describe(targets)} ({where}), but {name} takes int64 class "
            f"indices 0..C-1: convert the labels with targets.long() (in the dataset, once)"
        )
    return None


def _loss(model, inputs, targets, loss_fn, epoch: int, batch: int):
    """``loss_fn(model(inputs), targets)``; torch's errors get a sentence naming the mistake."""
    try:
        outputs = forward(model, inputs)
    except Exception as err:
        clearer = forward_failed(model, inputs, err, f"epoch {epoch + 1}, batch {batch + 1}")
        if clearer is None:
            raise
        raise clearer from err
    try:
        if isinstance(loss_fn, _with_inputs):
            loss = loss_fn(outputs, targets, inputs)
        else:
            loss = loss_fn(outputs, targets)
    except Exception as err:
        where = f"epoch {epoch + 1}, batch {batch + 1}"
        named = loss_fn.loss_fn if isinstance(loss_fn, _with_inputs) else loss_fn
        clearer = loss_failed(outputs, targets, named, err, where)
        if clearer is None:
            raise
        raise clearer from err
    if not isinstance(loss, torch.Tensor) or loss.ndim:
        check_loss_value(loss, loss_fn, f"epoch {epoch + 1}, batch {batch + 1}")
    return loss


def first_tensor(obj) -> torch.Tensor | None:
    """The first tensor in ``obj`` (a tensor, or nested lists, tuples and dicts), or None."""
    if isinstance(obj, torch.Tensor):
        return obj
    items = obj.values() if isinstance(obj, Mapping) else obj
    if isinstance(items, (tuple, list)) or isinstance(obj, Mapping):
        for item in items:
            found = first_tensor(item)
            if found is not None:
                return found
    return None


def count_samples(inputs, targets) -> int:
    """Samples in a batch: the first dimension of the first tensor in targets, then inputs."""
    if isinstance(targets, torch.Tensor):
        return targets.shape[0] if targets.dim() else 1
    t = first_tensor(targets)
    t = t if t is not None else first_tensor(inputs)
    if t is not None:
        return t.shape[0] if t.dim() else 1
    return len(targets)


def move_to(obj, device: torch.device, non_blocking: bool):
    """``obj`` on ``device``: a tensor, or the tensors inside lists, tuples and dicts."""
    if isinstance(obj, torch.Tensor):
        return obj if obj.device == device else obj.to(device, non_blocking=non_blocking)
    if isinstance(obj, (list, tuple)):
        return type(obj)(move_to(o, device, non_blocking) for o in obj)
    if isinstance(obj, Mapping):
        return {k: move_to(v, device, non_blocking) for k, v in obj.items()}
    return obj


def _step(model, optimizer, loss_fn, device, non_blocking, amp_context, scaler, clip_grad_norm,
          scheduler, skip_nonfinite, epoch, tally, group) -> None:  # fmt: skip
    """One optimizer step over ``group``, a list of micro-batches: equal to one step on their union.

    ``amp_context`` is the autocast context entered for each forward and loss, or None.
    """
    if len(group) == 1:
        counts = (count_samples(*group[0]),)
        total = counts[0]
    else:
        counts = [count_samples(inputs, targets) for inputs, targets in group]
        total = sum(counts)
    losses, loss_sum = [], 0.0
    optimizer.zero_grad(set_to_none=True)
    for (inputs, targets), n in zip(group, counts):
        inputs = move_to(inputs, device, non_blocking)
        targets = move_to(targets, device, non_blocking)
        if amp_context is None:
            loss = _loss(model, inputs, targets, loss_fn, epoch, tally.batches)
        else:
            with amp_context:  # forward and loss only
                loss = _loss(model, inputs, targets, loss_fn, epoch, tally.batches)
        if len(group) > 1:
            # a mean loss over n samples, weighted n/total: the group's gradient equals the
            # gradient of the mean loss over all `total` samples, as one large batch would give
            scaled = loss * (n / total)
        else:
            scaled = loss
        (scaler.scale(scaled) if scaler is not None else scaled).backward()
        if not skip_nonfinite:
            # read later, with others (_Tally.settle); a loss may be (1,)-shaped
            losses.append((loss.detach().reshape(()) if loss.ndim else loss.detach(), n))
            continue
        value = loss.item()  # skipping a step is decided here, on the host: one read per step
        if not math.isfinite(value):
            optimizer.zero_grad(set_to_none=True)
            tally.skipped += 1
            tally.batches += len(group)
            return
        loss_sum += value * n
    if scaler is not None:
        if clip_grad_norm is not None:
            scaler.unscale_(optimizer)  # clip the true gradients, not the scaled ones
            nn.utils.clip_grad_norm_(model.parameters(), clip_grad_norm)
        scale = scaler.get_scale()
        scaler.step(optimizer)  # skipped when the gradients hold inf/NaN
        scaler.update()
        stepped = scaler.get_scale() >= scale  # the scale only drops after a skipped step
    else:
        if clip_grad_norm is not None:
            nn.utils.clip_grad_norm_(model.parameters(), clip_grad_norm)
        optimizer.step()
        stepped = True
    if stepped:
        tally.steps += 1
        if scheduler is not None:
            scheduler.step()
    else:
        tally.skipped += 1
    if skip_nonfinite:
        tally.loss_sum += loss_sum
    else:
        tally.defer(tally.batches, losses)
    tally.samples += total
    tally.batches += len(group)


def autocast(device: torch.device | str, amp: str | None):
    """The autocast context for ``amp`` on ``device`` (a no-op context when ``amp`` is None).

    Wrap the forward pass and the loss only; ``backward()`` and ``optimizer.step()`` stay outside.

    Args:
        device: the device the forward pass runs on (a ``torch.device`` or a string such as
            ``"cuda"``); its type picks the autocast backend.
        amp: ``"bf16"`` or ``"fp16"`` for the precision operations may drop to, or None for
            full precision (the context then does nothing).

    Example:
        >>> with autocast("cpu", "bf16"):
        ...     y = torch.nn.Linear(4, 2)(torch.randn(3, 4))
        >>> y.dtype
        torch.bfloat16
    """
    check_amp(amp)
    if amp is None:
        return contextlib.nullcontext()
    device_type = torch.device(device).type
    return torch.autocast(device_type=device_type, dtype=AMP_DTYPES[amp])


def split_batch(batch, epoch: int, batch_index: int, batch_fn=None):
    """``(inputs, targets)`` of one batch: the batch itself, or what ``batch_fn`` makes of it."""
    pair = batch if batch_fn is None else batch_fn(batch)
    if isinstance(pair, (tuple, list)) and len(pair) == 2:
        return pair
    what = f"a {type(pair).__name__}"
    if isinstance(pair, (tuple, list)):
        what += f" of length {len(pair)}"
    where = f"in epoch {epoch + 1} batch {batch_index + 1}"
    if batch_fn is not None:
        raise TypeError(
            f"batch_fn must return an (inputs, targets) pair, but {where} it returned {what}"
        )
    fix = "Make the dataset's __getitem__ return (input, target), or pass batch_fn"
    if isinstance(batch, Mapping):
        keys = list(batch)
        fix = (
            f"Pass batch_fn to pick them from the dict, e.g. "
            f"batch_fn=lambda b: (b[{keys[0]!r}], b[{keys[-1]!r}])"
        )
    raise TypeError(
        f"the loader must yield (inputs, targets) pairs, but {where} it yielded {what}. {fix}."
    )


def _train_steps(model, loader, optimizer, loss_fn, *, device, amp, scaler, accumulate,
                 clip_grad_norm, scheduler, skip_nonfinite, epoch, tally, batch_fn=None,
                 loss_takes_inputs=False):  # fmt: skip
    """Train over ``loader``, yielding ``tally`` after every optimizer step."""
    model.train()
    tally.epoch = epoch
    loss_fn = _with_inputs(loss_fn) if loss_takes_inputs else loss_fn
    # everything that does not change between steps is settled once, here: this loop's own
    # Python is what it costs over a hand-written loop (benchmarks/loop_overhead.py)
    amp_context = None if amp is None else autocast(device, amp)
    step = partial(_step, model, optimizer, loss_fn, device, device.type == "cuda", amp_context,
                   scaler, clip_grad_norm, scheduler, skip_nonfinite, epoch, tally)  # fmt: skip
    group: list = []
    for batch in loader:
        if batch_fn is None and type(batch) in (tuple, list) and len(batch) == 2:
            group.append(batch)  # the usual (inputs, targets) pair
        else:
            group.append(split_batch(batch, epoch, tally.batches + len(group), batch_fn))
        if len(group) == accumulate:
            step(group)
            group = []
            yield tally
    if group:  # the last, partial accumulation group
        step(group)
        yield tally


def check_batch_fn(batch_fn) -> None:
    """Refuse a ``batch_fn`` that is not callable, with an example of one."""
    if batch_fn is not None and not callable(batch_fn):
        raise TypeError(
            f"batch_fn must be a function batch -> (inputs, targets), got "
            f"{type(batch_fn).__name__}; e.g. batch_fn=lambda b: (b['x'], b['y'])"
        )


def check_model_device(model: nn.Module, device: torch.device) -> None:
    """Refuse a model whose parameters sit on another kind of device than ``device``."""
    param = next(model.parameters(), None)
    if param is not None and param.device.type != device.type:
        raise ValueError(
            f"the model is on {param.device} but device={str(device)!r}; move it once with "
            f"model.to(device) before training (fit does this for you)"
        )


def _mps_available() -> bool:
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def pick_device(device: str | torch.device = "auto") -> torch.device:
    """Return the device to train on.

    Args:
        device: ``"auto"`` picks CUDA, then Apple MPS, then the CPU. Anything else
            (``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"`` or a ``torch.device``) is checked
            and returned as a ``torch.device``.

    Returns:
        A ``torch.device``.

    Raises:
        TypeError: if ``device`` is not a string or ``torch.device``.
        ValueError: if the string is not a device PyTorch knows.
        RuntimeError: if the requested device is not available on this machine, with the
            likely reason.

    Example:
        >>> pick_device("cpu")
        device(type='cpu')
    """
    if not isinstance(device, (str, torch.device)):
        raise TypeError(
            f"device must be 'auto', a device string like 'cuda:0', or a torch.device; "
            f"got {type(device).__name__} ({device!r})"
        )
    if device == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if _mps_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        dev = torch.device(device)
    except RuntimeError as err:
        raise ValueError(
            f"device={device!r} is not a device PyTorch knows; expected 'auto', 'cpu', "
            f"'cuda', 'cuda:N' or 'mps'"
        ) from err
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            hint = (
                "this PyTorch build has no CUDA support (a CPU-only wheel)"
                if torch.version.cuda is None
                else "no usable GPU or driver was found (check `nvidia-smi`)"
            )
            raise RuntimeError(
                f"device={device!r} was requested but CUDA is not available: {hint}. "
                f"Use device='auto' to fall back to the CPU, or run "
                f"`python -m companion doctor` for a diagnosis."
            )
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise RuntimeError(
                f"device={device!r} was requested but only {torch.cuda.device_count()} "
                f"CUDA device(s) exist (indices 0..{torch.cuda.device_count() - 1})"
            )
    if dev.type == "mps" and not _mps_available():
        raise RuntimeError(
            f"device={device!r} was requested but Apple MPS is not available on this machine "
            f"(it needs Apple silicon and, for current wheels, macOS 14 or later); use device='auto'"
        )
    return dev


def model_device(model, device) -> torch.device:
    """``"auto"`` for a function that leaves the model where it is: the model's own device."""
    if isinstance(device, str) and device == "auto" and isinstance(model, nn.Module):
        tensor = next(model.parameters(), None)
        if tensor is None:
            tensor = next(model.buffers(), None)
        return tensor.device if tensor is not None else torch.device("cpu")
    return pick_device(device)


def train_one_epoch(
    model: nn.Module,
    loader,
    optimizer: torch.optim.Optimizer,
    loss_fn: Callable,
    *,
    device: str | torch.device = "auto",
    amp: str | None = None,
    scaler: torch.amp.GradScaler | None = None,
    accumulate: int = 1,
    clip_grad_norm: float | None = None,
    scheduler=None,
    skip_nonfinite: bool = False,
    epoch: int = 0,
    batch_fn: Callable | None = None,
    loss_takes_inputs: bool = False,
) -> float:
    """Train ``model`` for one pass over ``loader`` and return the mean training loss.

    Puts the model in train mode, clears gradients before every step, and moves each batch
    to ``device`` (the model must already be there).

    The losses stay on the device, so the loop never waits for the GPU between steps: they
    are read together, in one transfer, when their sum is needed (the epoch's end, ``fit``'s
    progress bar at most twice a second, a checkpoint) and at least every 4096 steps. A NaN or
    infinite loss is found then and raises :class:`NonFiniteLossError` naming its epoch and
    batch; the steps queued after it have been taken by then, so the weights may already hold
    NaN (no checkpoint is written past it). ``skip_nonfinite=True`` reads each loss at its step.

    Args:
        model: the model to train, already on ``device``; it is left in train mode.
        loader: yields ``(inputs, targets)`` batches, where ``inputs`` may be a tensor, a
            tuple (passed as ``model(*inputs)``) or a dict (``model(**inputs)``); anything
            else through ``batch_fn``.
        optimizer: built over the model's parameters; its gradients are cleared before every
            step.
        loss_fn: ``loss_fn(outputs, targets) -> scalar tensor``, a mean over the batch (for
            ``accumulate`` to give the larger batch's update).
        device: where the batches go; ``"auto"``: where the model's parameters are.
        amp: None, ``"bf16"`` or ``"fp16"``. Autocast wraps forward and loss only.
        scaler: a ``torch.amp.GradScaler``; required with ``amp="fp16"``. Create it once
            (``companion.make_scaler(device, "fp16")``) so its scale carries over epochs.
        accumulate: micro-batches per optimizer step; the update equals one step on the
            ``accumulate``-times larger batch (for a mean-reduced loss), the last partial
            group included.
        clip_grad_norm: max gradient norm, applied after unscaling.
        scheduler: stepped after every optimizer step actually taken (per-step schedules);
            a step skipped by the scaler does not advance it.
        skip_nonfinite: skip a step whose loss is NaN/inf instead of raising: no optimizer
            or scheduler step, gradients cleared, the weights as they were. Whether to call
            ``optimizer.step()`` is decided on the host, so this reads every micro-batch's loss
            when it is computed (on a GPU, a wait per step, as ``GradScaler`` makes for
            non-fused optimizers).
        epoch: the 0-based epoch index, used in error messages.
        batch_fn: ``batch_fn(batch) -> (inputs, targets)`` for loaders that yield something
            else, e.g. ``lambda b: (b["x"], b["y"])`` for dict batches. Targets may be any
            structure the loss understands (a tuple ``(labels, mask)``, a dict).
        loss_takes_inputs: call ``loss_fn(outputs, targets, inputs)``, for a loss that needs
            the inputs (a padding mask, per-sample weights carried in the inputs).

    Returns:
        The mean loss over the epoch's samples (NaN if every step was skipped).

    Raises:
        NonFiniteLossError: a loss was NaN or inf (unless ``skip_nonfinite``), raised when the
            losses are read (above).
        TypeError: the loader yields something other than ``(inputs, targets)``.
        ValueError: a bad argument (``accumulate < 1``, unknown ``amp``, fp16 without scaler,
            model on another device).

    Example:
        >>> model = nn.Linear(4, 2)
        >>> data = [(torch.randn(8, 4), torch.randint(0, 2, (8,)))] * 3
        >>> opt = torch.optim.SGD(model.parameters(), lr=0.1)
        >>> loss = train_one_epoch(model, data, opt, nn.CrossEntropyLoss(), device="cpu")
    """
    device = model_device(model, device)
    _check_args(accumulate, clip_grad_norm, amp)
    _check_training(model, loader, optimizer, loss_fn, scheduler, "loader")
    check_batch_fn(batch_fn)
    if amp == "fp16" and scaler is None:
        raise ValueError(
            "amp='fp16' needs a GradScaler: pass scaler=companion.make_scaler(device, 'fp16'), "
            "created once outside the epoch loop (or use amp='bf16', which needs none)"
        )
    check_model_device(model, device)
    tally = _Tally()
    steps = _train_steps(model, loader, optimizer, loss_fn, device=device, amp=amp, scaler=scaler,
                         accumulate=accumulate, clip_grad_norm=clip_grad_norm, scheduler=scheduler,
                         skip_nonfinite=skip_nonfinite, epoch=epoch, tally=tally, batch_fn=batch_fn,
                         loss_takes_inputs=loss_takes_inputs)  # fmt: skip
    for _ in steps:
        pass
    if tally.batches == 0:
        raise ValueError("the loader yielded no batches; is the dataset empty?")
    return tally.mean_loss

# %% ch04_evaluate points=0 feedback="expected evaluate(model, loader, loss_fn, device)"
from collections.abc import Callable, Mapping
import torch
from torch import nn
import contextlib
from collections.abc import Mapping
from torch.utils.data import Dataset


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


def is_stateful(metric) -> bool:
    """True for an object with ``update``, ``compute`` and ``reset`` (torchmetrics' protocol)."""
    return all(callable(getattr(metric, name, None)) for name in ("update", "compute", "reset"))


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


def _is_classification(outputs, targets) -> bool:
    return (
        isinstance(outputs, torch.Tensor)
        and isinstance(targets, torch.Tensor)
        and outputs.dim() >= 2
        and not targets.is_floating_point()
        and targets.shape == outputs.shape[:1] + outputs.shape[2:]
    )


AMP_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


def check_amp(amp: str | None) -> str | None:
    """Validate an ``amp`` argument: ``None``, ``"bf16"`` or ``"fp16"``.

    Raises:
        ValueError: for any other value, naming the accepted ones.
    """
    if amp is None or (isinstance(amp, str) and amp in AMP_DTYPES):
        return amp
    raise ValueError(
        f"amp must be None, 'bf16' or 'fp16', got {amp!r}. "
        f"Use 'bf16' where the hardware supports it (no scaler needed), 'fp16' with a GradScaler."
    )


def autocast(device: torch.device | str, amp: str | None):
    """The autocast context for ``amp`` on ``device`` (a no-op context when ``amp`` is None).

    Wrap the forward pass and the loss only; ``backward()`` and ``optimizer.step()`` stay outside.

    Args:
        device: the device the forward pass runs on (a ``torch.device`` or a string such as
            ``"cuda"``); its type picks the autocast backend.
        amp: ``"bf16"`` or ``"fp16"`` for the precision operations may drop to, or None for
            full precision (the context then does nothing).

    Example:
        >>> with autocast("cpu", "bf16"):
        ...     y = torch.nn.Linear(4, 2)(torch.randn(3, 4))
        >>> y.dtype
        torch.bfloat16
    """
    check_amp(amp)
    if amp is None:
        return contextlib.nullcontext()
    device_type = torch.device(device).type
    return torch.autocast(device_type=device_type, dtype=AMP_DTYPES[amp])


def check_batch_fn(batch_fn) -> None:
    """Refuse a ``batch_fn`` that is not callable, with an example of one."""
    if batch_fn is not None and not callable(batch_fn):
        raise TypeError(
            f"batch_fn must be a function batch -> (inputs, targets), got "
            f"{type(batch_fn).__name__}; e.g. batch_fn=lambda b: (b['x'], b['y'])"
        )


def check_loader(loader, name: str) -> None:
    """A loader, not a Dataset, and not empty (when it knows its length)."""
    if isinstance(loader, Dataset) and not isinstance(loader, torch.utils.data.IterableDataset):
        raise TypeError(
            f"{name} is a {type(loader).__name__}, a Dataset: iterating it gives single "
            f"samples, not batches. Wrap it in a DataLoader: DataLoader(dataset, "
            f"batch_size=64, shuffle={name == 'train_loader'})"
        )
    if not (hasattr(loader, "__iter__") or hasattr(loader, "__getitem__")):
        raise TypeError(
            f"{name} must be iterable, yielding (inputs, targets) batches; got "
            f"{type(loader).__name__}"
        )
    try:
        size = len(loader)
    except TypeError:  # an iterable of unknown length: checked when it ends
        return
    if size == 0:
        dataset = getattr(loader, "dataset", None)
        detail = ""
        if dataset is not None and hasattr(dataset, "__len__"):
            detail = (
                f" (its dataset has {len(dataset)} samples, batch_size="
                f"{getattr(loader, 'batch_size', '?')}, drop_last={getattr(loader, 'drop_last', '?')})"
            )
        raise ValueError(f"{name} yields no batches{detail}; is the dataset empty?")


def check_loss_fn(loss_fn) -> None:
    if isinstance(loss_fn, type):
        raise TypeError(
            f"loss_fn is the class {loss_fn.__name__}; pass an instance: {loss_fn.__name__}()"
        )
    if not callable(loss_fn):
        raise TypeError(
            f"loss_fn must be callable as loss_fn(outputs, targets), got {type(loss_fn).__name__}"
        )
    reduction = getattr(loss_fn, "reduction", "mean")
    if reduction in ("sum", "none"):
        raise ValueError(
            f"loss_fn has reduction={reduction!r}; the loop needs the mean over the batch (it "
            f"reports per-sample means and weights batches by their size): use "
            f"{type(loss_fn).__name__}() with reduction='mean', the default"
        )


def _describe(obj) -> str:
    if isinstance(obj, torch.Tensor):
        return f"a {str(obj.dtype).replace('torch.', '')} tensor of shape {tuple(obj.shape)}"
    if isinstance(obj, (tuple, list)):
        return f"a {type(obj).__name__} of {len(obj)}"
    return f"a {type(obj).__name__}"


def check_loss_value(loss, loss_fn, where: str) -> None:
    if not isinstance(loss, torch.Tensor):
        raise TypeError(
            f"loss_fn returned {_describe(loss)} ({where}); it must return the loss tensor "
            f"(not loss.item()) so that backward() can run"
        )
    if loss.numel() != 1:
        raise ValueError(
            f"loss_fn returned {_describe(loss)} ({where}), not one number: reduce it with "
            f"reduction='mean' or .mean() (the loop needs the batch mean)"
        )


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


def check_model(model) -> None:
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")


def check_model_device(model: nn.Module, device: torch.device) -> None:
    """Refuse a model whose parameters sit on another kind of device than ``device``."""
    param = next(model.parameters(), None)
    if param is not None and param.device.type != device.type:
        raise ValueError(
            f"the model is on {param.device} but device={str(device)!r}; move it once with "
            f"model.to(device) before training (fit does this for you)"
        )


def first_tensor(obj) -> torch.Tensor | None:
    """The first tensor in ``obj`` (a tensor, or nested lists, tuples and dicts), or None."""
    if isinstance(obj, torch.Tensor):
        return obj
    items = obj.values() if isinstance(obj, Mapping) else obj
    if isinstance(items, (tuple, list)) or isinstance(obj, Mapping):
        for item in items:
            found = first_tensor(item)
            if found is not None:
                return found
    return None


def count_samples(inputs, targets) -> int:
    """Samples in a batch: the first dimension of the first tensor in targets, then inputs."""
    if isinstance(targets, torch.Tensor):
        return targets.shape[0] if targets.dim() else 1
    t = first_tensor(targets)
    t = t if t is not None else first_tensor(inputs)
    if t is not None:
        return t.shape[0] if t.dim() else 1
    return len(targets)


def forward(model: nn.Module, inputs):
    """``model(inputs)``: a tuple or list is spread as arguments, a dict as keyword arguments."""
    if isinstance(inputs, torch.Tensor):
        return model(inputs)
    if isinstance(inputs, (tuple, list)):
        return model(*inputs)
    if isinstance(inputs, Mapping):
        return model(**inputs)
    return model(inputs)


def _mps_available() -> bool:
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def pick_device(device: str | torch.device = "auto") -> torch.device:
    """Return the device to train on.

    Args:
        device: ``"auto"`` picks CUDA, then Apple MPS, then the CPU. Anything else
            (``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"`` or a ``torch.device``) is checked
            and returned as a ``torch.device``.

    Returns:
        A ``torch.device``.

    Raises:
        TypeError: if ``device`` is not a string or ``torch.device``.
        ValueError: if the string is not a device PyTorch knows.
        RuntimeError: if the requested device is not available on this machine, with the
            likely reason.

    Example:
        >>> pick_device("cpu")
        device(type='cpu')
    """
    if not isinstance(device, (str, torch.device)):
        raise TypeError(
            f"device must be 'auto', a device string like 'cuda:0', or a torch.device; "
            f"got {type(device).__name__} ({device!r})"
        )
    if device == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if _mps_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        dev = torch.device(device)
    except RuntimeError as err:
        raise ValueError(
            f"device={device!r} is not a device PyTorch knows; expected 'auto', 'cpu', "
            f"'cuda', 'cuda:N' or 'mps'"
        ) from err
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            hint = (
                "this PyTorch build has no CUDA support (a CPU-only wheel)"
                if torch.version.cuda is None
                else "no usable GPU or driver was found (check `nvidia-smi`)"
            )
            raise RuntimeError(
                f"device={device!r} was requested but CUDA is not available: {hint}. "
                f"Use device='auto' to fall back to the CPU, or run "
                f"`python -m companion doctor` for a diagnosis."
            )
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise RuntimeError(
                f"device={device!r} was requested but only {torch.cuda.device_count()} "
                f"CUDA device(s) exist (indices 0..{torch.cuda.device_count() - 1})"
            )
    if dev.type == "mps" and not _mps_available():
        raise RuntimeError(
            f"device={device!r} was requested but Apple MPS is not available on this machine "
            f"(it needs Apple silicon and, for current wheels, macOS 14 or later); use device='auto'"
        )
    return dev


def model_device(model, device) -> torch.device:
    """``"auto"`` for a function that leaves the model where it is: the model's own device."""
    if isinstance(device, str) and device == "auto" and isinstance(model, nn.Module):
        tensor = next(model.parameters(), None)
        if tensor is None:
            tensor = next(model.buffers(), None)
        return tensor.device if tensor is not None else torch.device("cpu")
    return pick_device(device)


def move_to(obj, device: torch.device, non_blocking: bool):
    """``obj`` on ``device``: a tensor, or the tensors inside lists, tuples and dicts."""
    if isinstance(obj, torch.Tensor):
        return obj if obj.device == device else obj.to(device, non_blocking=non_blocking)
    if isinstance(obj, (list, tuple)):
        return type(obj)(move_to(o, device, non_blocking) for o in obj)
    if isinstance(obj, Mapping):
        return {k: move_to(v, device, non_blocking) for k, v in obj.items()}
    return obj


def split_batch(batch, epoch: int, batch_index: int, batch_fn=None):
    """``(inputs, targets)`` of one batch: the batch itself, or what ``batch_fn`` makes of it."""
    pair = batch if batch_fn is None else batch_fn(batch)
    if isinstance(pair, (tuple, list)) and len(pair) == 2:
        return pair
    what = f"a {type(pair).__name__}"
    if isinstance(pair, (tuple, list)):
        what += f" of length {len(pair)}"
    where = f"in epoch {epoch + 1} batch {batch_index + 1}"
    if batch_fn is not None:
        raise TypeError(
            f"batch_fn must return an (inputs, targets) pair, but {where} it returned {what}"
        )
    fix = "Make the dataset's __getitem__ return (input, target), or pass batch_fn"
    if isinstance(batch, Mapping):
        keys = list(batch)
        fix = (
            f"Pass batch_fn to pick them from the dict, e.g. "
            f"batch_fn=lambda b: (b[{keys[0]!r}], b[{keys[-1]!r}])"
        )
    raise TypeError(
        f"the loader must yield (inputs, targets) pairs, but {where} it yielded {what}. {fix}."
    )


def evaluate(
    model: nn.Module,
    loader,
    loss_fn: Callable,
    *,
    device: str | torch.device = "auto",
    metrics: Mapping | None = None,
    amp: str | None = None,
    batch_fn: Callable | None = None,
    loss_takes_inputs: bool = False,
) -> dict:
    """Evaluate ``model`` on ``loader`` in eval mode, without building any graph.

    Uses ``model.eval()`` (dropout off, batch norm on running statistics) and
    ``torch.inference_mode()``, then restores every submodule's previous mode.

    Args:
        model: the model to evaluate; it runs in eval mode and gets its modes back after.
        loader: yields ``(inputs, targets)`` batches (or what ``batch_fn`` reads), e.g. the
            validation ``DataLoader``; its order does not matter.
        loss_fn: the loss to average over samples, ``loss_fn(outputs, targets)`` (the
            training loss, so that validation and training losses compare).
        device: where the batches go; ``"auto"``: where the model's parameters are.
        batch_fn: ``batch_fn(batch) -> (inputs, targets)`` for loaders that yield something
            else, as in :func:`train_one_epoch`.
        loss_takes_inputs: call ``loss_fn(outputs, targets, inputs)``, for a loss that needs
            the inputs (a padding mask).
        metrics: extra ``{name: metric}``: a function ``fn(outputs, targets)`` returning the
            batch mean, averaged over samples (a per-sample average: right for accuracy, not
            for F1), or a stateful object with ``update(outputs, targets)``, ``compute()`` and
            ``reset()`` (torchmetrics' protocol; :class:`companion.F1Score`), computed over
            the whole loader. See :mod:`companion.metrics`.
        amp: optional autocast for the forward pass (None, "bf16", "fp16").

    Returns:
        ``{"loss": ..., "accuracy": ...}`` (accuracy when outputs look like class scores
        ``(B, C, ...)`` and targets like class indices), plus one entry per metric.

    Example:
        >>> model = nn.Linear(4, 3)
        >>> data = [(torch.randn(6, 4), torch.randint(0, 3, (6,)))]
        >>> sorted(evaluate(model, data, nn.CrossEntropyLoss(), device="cpu"))
        ['accuracy', 'loss']
    """
    device = model_device(model, device)
    check_amp(amp)
    check_model(model)
    check_loss_fn(loss_fn)
    check_loader(loader, "loader")
    check_batch_fn(batch_fn)
    totals = MetricTotals(check_metrics(metrics))
    check_model_device(model, device)
    modes = {m: m.training for m in model.modules()}
    losses, hits, samples, classification = [], [], 0, True
    model.eval()
    try:
        with torch.inference_mode():
            for i, batch in enumerate(loader):
                inputs, targets = split_batch(batch, 0, i, batch_fn)
                inputs, targets = move_to(inputs, device, False), move_to(targets, device, False)
                with autocast(device, amp):
                    outputs = forward(model, inputs)
                    if loss_takes_inputs:
                        loss = loss_fn(outputs, targets, inputs)
                    else:
                        loss = loss_fn(outputs, targets)
                if not isinstance(loss, torch.Tensor) or loss.ndim:
                    check_loss_value(loss, loss_fn, f"evaluation batch {i + 1}")
                n = count_samples(inputs, targets)
                samples += n
                losses.append((loss.reshape(()) if loss.ndim else loss, n))  # read after the loop
                totals.update(outputs, targets, n)
                classification = classification and _is_classification(outputs, targets)
                if classification:
                    hits.append((outputs.argmax(dim=1) == targets).sum())
            if samples:
                loss_values = torch.stack([loss for loss, _ in losses]).tolist()
                hit_values = torch.stack(hits).tolist() if classification else []
    finally:
        for module, mode in modes.items():
            module.train(mode)
    if samples == 0:
        raise ValueError("the loader yielded no batches; is the dataset empty?")
    loss_sum = 0.0
    for value, (_, n) in zip(loss_values, losses):
        loss_sum += value * n
    result = {"loss": loss_sum / samples}
    if classification:
        result["accuracy"] = sum(hit_values) / samples
    result.update(totals.results(samples))
    return result

# %% ch04_load_unwrapped points=2 feedback="passed"
from collections import OrderedDict
from collections.abc import Mapping
from torch import nn


class CheckpointError(RuntimeError):
    """A checkpoint file is missing, unreadable, unsafe, or does not match what it is loaded into."""


WRAPPER_PREFIXES = ("module.", "_orig_mod.")


def unwrap_model(model: nn.Module) -> nn.Module:
    """Return the plain module inside DataParallel, DistributedDataParallel and torch.compile.

    Args:
        model: a module, wrapped any number of times or not at all; a plain module is
            returned as it is.

    Example:
        >>> net = nn.Linear(2, 2)
        >>> unwrap_model(nn.DataParallel(net)) is net
        True
    """
    while True:
        if isinstance(model, (nn.DataParallel, nn.parallel.DistributedDataParallel)):
            model = model.module
        elif hasattr(model, "_orig_mod") and isinstance(model._orig_mod, nn.Module):
            model = model._orig_mod  # torch.compile's OptimizedModule
        else:
            return model


def load_unwrapped(model: nn.Module, state_dict: Mapping) -> None:
    """Load into ``model`` a state dict saved from it plain or inside any nesting of wrappers.

    DataParallel and DistributedDataParallel prefix every key with ``module.``, torch.compile
    with ``_orig_mod.``, stacked in the order they were applied. Which prefixes the file carries
    is read from the file itself: a prefix is a wrapper's only when every key carries it, and
    peeling stops as soon as the keys are the model's own. So a submodule that is really called
    ``module`` keeps its name, even in a model whose only child it is (unlike
    :func:`strip_prefixes`, which strips every leading ``module.``).

    Args:
        model: the model to load into (a wrapped model is unwrapped first).
        state_dict: a mapping from parameter names to tensors; it is not modified.

    Raises:
        CheckpointError: the keys do not fit the model however the file was wrapped; the
            message names the missing and the unexpected keys as the model names them. The
            model is then left unchanged.

    Example:
        >>> net = nn.Linear(2, 2)
        >>> load_unwrapped(net, nn.DataParallel(nn.Linear(2, 2)).state_dict())
    """
    if not isinstance(state_dict, Mapping):
        raise TypeError(
            f"state_dict must be a mapping of names to tensors, got {type(state_dict).__name__}"
        )
    target = unwrap_model(model)
    want = list(target.state_dict())
    wanted = set(want)
    optional = {
        k for k in want if k.rsplit(".", 1)[-1] == "num_batches_tracked"
    }  # batch norm fills it in
    keys = list(state_dict)
    candidates = [""]  # the prefixes every key shares, peeled one wrapper at a time
    while keys:
        shared = [
            p for p in WRAPPER_PREFIXES if all(k.startswith(candidates[-1] + p) for k in keys)
        ]
        if not shared:
            break
        candidates.append(candidates[-1] + shared[0])

    def fits(prefix: str) -> bool:
        names = {k[len(prefix) :] for k in keys}
        return names <= wanted and wanted - names <= optional

    def overlap(prefix: str) -> int:
        return sum(k[len(prefix) :] in wanted for k in keys)

    exact = [p for p in candidates if fits(p)]
    prefix = exact[0] if exact else max(candidates, key=overlap)  # the first of the best
    renamed = OrderedDict((k[len(prefix) :], state_dict[k]) for k in keys)
    missing = [k for k in want if k not in renamed and k not in optional]
    unexpected = [k for k in renamed if k not in wanted]
    if missing or unexpected:
        unwrapped = f" (after removing the wrapper prefix {prefix!r})" if prefix else ""
        raise CheckpointError(
            f"the state dict does not fit {type(target).__name__}{unwrapped}: missing keys "
            f"{missing}, unexpected keys {unexpected}"
        )
    target.load_state_dict(renamed)
