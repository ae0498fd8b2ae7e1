# Corpus: transcriber (issue 39): every exercise that has a companion counterpart, answered with the
# companion's own source as inspect.getsource shows it, helpers it calls pasted above it, imports
# added. Where the exercise asks what the companion does (most of them), that still earns the
# points: the flag is what stops it. Where it asks for another signature or policy, it loses them.
# review: matches companion
# %% ch03_as_float32 points=3 feedback="passed"
import numpy as np
import torch


_NUMERIC_KINDS = "biuf"


def _device(device) -> torch.device:
    if isinstance(device, torch.device):
        return device
    if not isinstance(device, str):
        raise TypeError(
            f"device must be a torch.device or a name such as 'cpu' or 'cuda', got "
            f"{type(device).__name__} {device!r}"
        )
    try:
        return torch.device(device)
    except RuntimeError:
        raise ValueError(
            f"device must be a device name such as 'cpu', 'cuda', 'cuda:1' or 'mps', got {device!r}"
        ) from None


def as_float32(array: np.ndarray, device: torch.device | str = "cpu") -> torch.Tensor:
    """Return ``array`` as a float32 tensor on ``device``, copying only when it must.

    A float32 array that stays on the CPU becomes a tensor that *shares* its memory: no copy
    is made, and writing into one shows in the other. That holds for any layout PyTorch can
    describe (contiguous, transposed, sliced with a step). Everything else is copied once:

    - another dtype is converted (float64 rounds to float32, and values beyond its range become
      ``inf`` with NumPy's overflow warning; integers and booleans become their float values);
    - negative strides (``a[::-1]``, ``np.flip``), which no tensor can describe, are laid out
      afresh;
    - a read-only array (``np.frombuffer`` on bytes, a memory map opened with ``mode="r"``) is
      copied, since a tensor cannot be made read-only;
    - a ``device`` other than the CPU receives the (converted) data in one transfer.

    Args:
        array: a NumPy array of booleans, integers or floats, of any shape (0-d included) and
            layout.
        device: where the tensor lives: ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"`` or a
            ``torch.device``.

    Returns:
        A float32 tensor of the array's shape on ``device``.

    Raises:
        TypeError: if ``array`` is not a NumPy array, or holds values that are not real numbers
            (complex, strings, objects, dates), or
            ``device`` is neither a string nor a ``torch.device``.
        ValueError: if ``device`` is a string that names no device.

    Example:
        >>> a = np.zeros(3, dtype=np.float32)
        >>> t = as_float32(a, "cpu")
        >>> a[0] = 5.0  # the tensor is a view of the array
        >>> t
        tensor([5., 0., 0.])
        >>> as_float32(np.arange(3), "cpu")  # int64 in, one converted copy out
        tensor([0., 1., 2.])
    """
    if not isinstance(array, np.ndarray):
        hint = ""
        if isinstance(array, torch.Tensor):
            hint = "; for a tensor use tensor.to(device, torch.float32)"
        elif isinstance(array, (list, tuple, int, float, np.generic)):
            hint = "; for Python or NumPy scalars and lists use torch.tensor(data, dtype=torch.float32)"
        raise TypeError(
            f"array must be a NumPy array (np.ndarray), got {type(array).__name__}{hint}"
        )
    if array.dtype.kind not in _NUMERIC_KINDS:
        raise TypeError(
            f"array must hold booleans, integers or floats to become float32, got dtype "
            f"{array.dtype}"
        )
    device = _device(device)
    viewable = (
        array.dtype == np.float32  # native byte order too: '>f4' is not equal to float32
        and all(stride >= 0 for stride in array.strides)
        and array.flags.writeable
    )
    if viewable:
        tensor = torch.from_numpy(array)  # a view of the array's memory
    else:
        # One pass: NumPy converts and lays the values out in C order (positive strides).
        tensor = torch.from_numpy(np.array(array, dtype=np.float32, order="C"))
    if device.type == "cpu":
        return tensor  # .to("cpu:0") would copy a tensor on "cpu"
    return tensor.to(device)  # one transfer

# %% ch03_accumulation_step points=4 feedback="passed"
from collections.abc import Callable, Sequence
import torch
from torch import nn


def _counted(loss_fn, targets: torch.Tensor) -> float:
    """What a mean over ``targets`` divides by (any constant factor cancels out in the shares)."""
    ignore_index = getattr(loss_fn, "ignore_index", None)
    if ignore_index is None or targets.is_floating_point():
        return float(targets.numel())  # class probabilities or regression: every element counts
    kept = targets[targets != ignore_index]
    weight = getattr(loss_fn, "weight", None)
    if weight is None:
        return float(kept.numel())
    return float(weight.detach()[kept].sum().item())


def _targets(batch, index: int) -> torch.Tensor:
    if not (isinstance(batch, (tuple, list)) and len(batch) == 2):
        what = type(batch).__name__
        if isinstance(batch, (tuple, list)):
            what += f" of length {len(batch)}"
        raise TypeError(f"micro_batches[{index}] must be an (inputs, targets) pair, got {what}")
    targets = batch[1]
    if not isinstance(targets, torch.Tensor) or targets.dim() == 0:
        what = "a 0-d tensor" if isinstance(targets, torch.Tensor) else type(targets).__name__
        raise TypeError(
            f"micro_batches[{index}]'s targets must be a tensor with a batch dimension, got {what}"
        )
    if targets.shape[0] == 0:
        raise ValueError(f"micro_batches[{index}] is empty (0 samples)")
    return targets


def accumulation_step(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    micro_batches: Sequence[tuple[torch.Tensor, torch.Tensor]],
) -> float:
    """Take one optimizer step over ``micro_batches``, equal to one step on all of them at once.

    "All of them at once" is the large batch made by concatenating the micro-batches, with
    ``loss_fn`` applied to the whole of it. Each micro-batch has its own forward and backward
    pass, so only one micro-batch's activations are held at a time, and its loss is weighted so
    that the gradients add up to the large batch's, even when the micro-batches differ in size:

    - ``reduction="sum"``: the large batch's loss is the sum of the micro-batches' sums, so each
      counts as it is.
    - ``reduction="mean"``: a mean divides by what counts, and each micro-batch is weighted by
      its share of that. What counts is every element of the targets, except those equal to
      ``loss_fn.ignore_index`` (``nn.CrossEntropyLoss`` and ``nn.NLLLoss``: padding, -100 by
      default); with class weights (``weight=``), each counted target counts its class's weight.
      Weighting by the number of rows is wrong as soon as the micro-batches hold different
      amounts of padding, and dividing by the number of micro-batches as soon as they differ in
      size.

    Gradients left from before the call are cleared first; afterwards every parameter's
    ``.grad`` holds the large batch's gradient, ready to inspect or clip. A micro-batch in which
    no target counts adds nothing to a mean and is skipped (its mean loss would be NaN).

    The equality holds for models that treat samples independently. Batch norm in train mode
    normalizes each micro-batch with its own statistics, so it breaks it; so does dropout,
    whose masks come from the random generator in another order.

    Args:
        model: the model, on the device the batches are on.
        optimizer: an optimizer over ``model``'s parameters.
        loss_fn: a loss module with ``reduction`` ``"mean"`` or ``"sum"``, e.g.
            ``nn.CrossEntropyLoss(ignore_index=-100)`` or ``nn.MSELoss(reduction="sum")``; a plain
            function is taken to average over every element of the targets.
        micro_batches: ``(inputs, targets)`` pairs.

    Returns:
        The large batch's loss (``loss_fn`` on all micro-batches at once), as a Python float.

    Raises:
        ValueError: if ``micro_batches`` is empty or holds an empty batch, ``loss_fn``'s
            ``reduction`` is neither ``"mean"`` nor ``"sum"``, or no target counts at all.
        TypeError: if an item of ``micro_batches`` is not an ``(inputs, targets)`` pair of
            tensors.

    Example:
        >>> model = nn.Linear(3, 4)
        >>> optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        >>> x, y = torch.randn(10, 3), torch.tensor([0, 1, -100, 3, 2, -100, -100, 1, 0, 2])
        >>> loss = accumulation_step(
        ...     model, optimizer, nn.CrossEntropyLoss(), [(x[:6], y[:6]), (x[6:], y[6:])]
        ... )
    """
    batches = list(micro_batches)
    if not batches:
        raise ValueError("micro_batches is empty: give at least one (inputs, targets) pair")
    reduction = getattr(loss_fn, "reduction", "mean")
    if reduction not in ("mean", "sum"):
        raise ValueError(
            f"loss_fn must reduce the batch to one number (reduction='mean' or 'sum'), got "
            f"reduction={reduction!r}"
        )
    counts = [_counted(loss_fn, _targets(batch, index)) for index, batch in enumerate(batches)]
    total = sum(counts)
    if reduction == "mean" and total == 0:
        raise ValueError(
            "no target counts in any micro-batch (all equal loss_fn.ignore_index, or weigh 0): "
            "the large batch's mean loss is undefined"
        )
    optimizer.zero_grad(set_to_none=True)  # nothing from before this call may leak in
    large_loss = 0.0
    for (inputs, targets), count in zip(batches, counts):
        if reduction == "mean" and count == 0:
            continue  # nothing counts here: its mean is 0/0, and its share of the mean is 0
        loss = loss_fn(model(inputs), targets)
        # a sum adds up as it is; a mean over `count` counted elements, weighted count/total,
        # adds up to the mean over all `total` of them, whose gradient one large batch gives
        share = 1.0 if reduction == "sum" else count / total
        (loss * share).backward()  # frees this micro-batch's graph
        large_loss += loss.item() * share
    optimizer.step()
    return large_loss

# %% ch03_ema_update points=3 feedback="passed"
import math
import numbers
import torch
from torch import nn


def _matched(averages: dict, currents: dict, what: str) -> list:
    if averages.keys() != currents.keys():
        missing = sorted(currents.keys() - averages.keys())
        extra = sorted(averages.keys() - currents.keys())
        parts = [
            f"ema_model lacks {missing[:3]}" if missing else "",
            f"model lacks {extra[:3]}" if extra else "",
        ]
        raise ValueError(
            f"ema_model and model must have the same {what}: {', '.join(p for p in parts if p)}; "
            "build ema_model with copy.deepcopy(model)"
        )
    wrong = [k for k in currents if averages[k].shape != currents[k].shape]
    if wrong:
        k = wrong[0]
        raise ValueError(
            f"ema_model and model differ in the shape of {what[:-1]} {k!r}: "
            f"{tuple(averages[k].shape)} and {tuple(currents[k].shape)}"
        )
    return [(averages[k], currents[k]) for k in currents]


@torch.no_grad()
def ema_update(ema_model: nn.Module, model: nn.Module, decay: float) -> None:
    """Move ``ema_model``'s weights towards ``model``'s: one step of an exponential moving average.

    Every parameter becomes ``decay * ema + (1 - decay) * param``, in place: the tensors keep
    their identity and memory, so anything holding them (an earlier ``state_dict()``, an
    ``AveragedModel``) sees the new values. Buffers (batch norm's running statistics and
    counters) are copied from ``model``: they describe the live model's activations and are not
    averaged (``torch.optim.swa_utils.AveragedModel``'s default, ``use_buffers=False``). No
    autograd graph is recorded, and ``ema_model``'s parameters stop requiring grad: the average
    is never trained. ``model`` is not changed. ``ema_model`` may live on another device (an
    average kept on the CPU for a model on a GPU).

    Args:
        ema_model: the average, usually started as ``copy.deepcopy(model)``.
        model: the model being trained, with the same parameter and buffer names and shapes.
        decay: how much of the old average each update keeps, in [0, 1]: 0 copies ``model``, 1
            leaves the average as it is; 0.99-0.9999 are typical, the larger the longer the
            memory (about ``1 / (1 - decay)`` steps).

    Raises:
        TypeError: if ``decay`` is not a real number, or a model is not an ``nn.Module``.
        ValueError: if ``decay`` is outside [0, 1], or the two models' parameters or buffers
            differ in names or shapes.

    Example:
        >>> import copy
        >>> model = nn.Linear(2, 1)
        >>> ema_model = copy.deepcopy(model)
        >>> with torch.no_grad():
        ...     _ = model.weight.add_(1.0)
        >>> ema_update(ema_model, model, decay=0.9)
        >>> torch.allclose(ema_model.weight, 0.9 * (model.weight - 1.0) + 0.1 * model.weight)
        True
    """
    for name, module in (("ema_model", ema_model), ("model", model)):
        if not isinstance(module, nn.Module):
            raise TypeError(f"{name} must be an nn.Module, got {type(module).__name__}")
    if isinstance(decay, bool) or not isinstance(decay, numbers.Real):
        raise TypeError(f"decay must be a number in [0, 1], got {type(decay).__name__}")
    if not (0.0 <= decay <= 1.0) or math.isnan(decay):
        raise ValueError(f"decay must be in [0, 1] (0.99-0.9999 are typical), got {decay}")
    params = _matched(
        dict(ema_model.named_parameters()), dict(model.named_parameters()), "parameters"
    )
    buffers = _matched(dict(ema_model.named_buffers()), dict(model.named_buffers()), "buffers")
    weight = 1.0 - float(decay)
    for average, current in params:
        average.requires_grad_(False)  # the average is never trained
        average.lerp_(current.to(average.device, average.dtype), weight)
    for average, current in buffers:
        average.copy_(current)
