# Corpus: transcriber (issue 39): every exercise that has a companion counterpart, answered with the
# companion's own source as inspect.getsource shows it, helpers it calls pasted above it, imports
# added. Where the exercise asks what the companion does (most of them), that still earns the
# points: the flag is what stops it. Where it asks for another signature or policy, it loses them.
# review: matches companion
# review: the code copied the companion's data
# %% ch07_diagnose_profile points=3 feedback="passed"
import math
from collections.abc import Iterator, Mapping, Sequence


_MS_PER_OP = 0.02


_WAIT_SHARE = 0.1


_PROFILE_KEYS = ("wait_ms", "compute_ms", "ops", "reads")


def _check_records(records) -> list[dict[str, float]]:
    if isinstance(records, Mapping) or not isinstance(records, Sequence) or not records:
        raise ValueError(
            f"records must be a non-empty list of per-step dicts, got {type(records).__name__} "
            f"{records!r:.80}. Profile at least one step."
        )
    checked = []
    for i, record in enumerate(records):
        if not isinstance(record, Mapping):
            raise ValueError(
                f"records[{i}] must be a dict with keys {_PROFILE_KEYS}, got {record!r:.80}"
            )
        missing = [key for key in _PROFILE_KEYS if key not in record]
        if missing:
            raise ValueError(f"records[{i}] lacks {missing}: every step needs {_PROFILE_KEYS}")
        values = {key: record[key] for key in _PROFILE_KEYS}
        bad = {
            k: v
            for k, v in values.items()
            if isinstance(v, bool)
            or not isinstance(v, (int, float))
            or not math.isfinite(v)
            or v < 0
        }
        if bad:
            raise ValueError(f"records[{i}] holds {bad}: times and counts are finite numbers >= 0")
        checked.append(values)
    return checked


def diagnose_profile(records: Sequence[Mapping[str, float]]) -> set[str]:
    """What slows a training loop down, read from a profile of a few of its steps.

    Each record is one step, split as chapter 7 splits it with ``torch.profiler``: ``wait_ms``,
    the milliseconds spent getting the batch; ``compute_ms``, the rest of the step (forward,
    loss, backward, optimizer); ``ops``, the operators the compute part called (every
    ``aten::`` event, nested ones included); ``reads``, how many times the compute part read a
    tensor's value into Python (``aten::_local_scalar_dense``: ``.item()``, ``print(loss)``,
    ``if loss > x:``). The profile is judged as a whole, over all its steps:

    - ``"input"``: the steps spent more than 10 % of their time waiting for batches (the input
      pipeline starves the device: a faster device would not make the run faster);
    - ``"sync"``: every step read a value (on a GPU, each read makes the host wait until the
      device has finished everything queued: a host sync per step); an occasional read, a
      logging step now and then, is not one;
    - ``"launch"``: the compute part averaged under 0.02 ms per operator, however many there
      were (each doing little work: the fixed cost of calling them, not the arithmetic, sets the
      time).

    Args:
        records: one dict per profiled step with the keys ``wait_ms``, ``compute_ms``, ``ops``
            and ``reads``, each a number >= 0.

    Returns:
        The problems the profile shows, a subset of :data:`PROFILE_PROBLEMS`; an empty set when
        nothing stands out.

    Raises:
        ValueError: ``records`` is empty or not a list of dicts, a key is missing, or a value is
            negative, not finite or not a number.

    Example:
        >>> starved = [{"wait_ms": 13.0, "compute_ms": 9.0, "ops": 112, "reads": 0}] * 4
        >>> sorted(diagnose_profile(starved))
        ['input']
        >>> diagnose_profile([{"wait_ms": 0.1, "compute_ms": 9.0, "ops": 112, "reads": 0}])
        set()
    """
    steps = _check_records(records)
    wait = sum(s["wait_ms"] for s in steps)
    compute = sum(s["compute_ms"] for s in steps)
    ops = sum(s["ops"] for s in steps)
    problems = set()
    if wait + compute > 0 and wait > _WAIT_SHARE * (wait + compute):
        problems.add("input")
    if all(s["reads"] >= 1 for s in steps):
        problems.add("sync")
    if ops > 0 and compute / ops < _MS_PER_OP:
        problems.add("launch")
    return problems

# %% ch07_amp_step points=4 feedback="passed"
import torch


def _check_amp_dtype(dtype) -> torch.dtype:
    if dtype not in (torch.float16, torch.bfloat16):
        raise ValueError(
            f"dtype must be torch.float16 or torch.bfloat16, got {dtype!r}. "
            "Autocast runs chosen operations in one of these half-precision types."
        )
    return dtype


def _check_scaler(scaler, dtype: torch.dtype) -> None:
    if scaler is not None and not isinstance(scaler, torch.amp.GradScaler):
        raise TypeError(
            f"scaler must be a torch.amp.GradScaler or None, got {type(scaler).__name__}. "
            "Create one per run with torch.amp.GradScaler(device_type)."
        )
    if scaler is None and dtype == torch.float16:
        raise ValueError(
            "dtype=torch.float16 needs a GradScaler (scaler=None was given): fp16 gradients "
            "underflow to zero without loss scaling. Pass torch.amp.GradScaler(device_type), or "
            "use torch.bfloat16, which needs none."
        )


def amp_step(
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    loss_fn,
    inputs: torch.Tensor,
    targets: torch.Tensor,
    scaler: torch.amp.GradScaler | None,
    device_type: str,
    dtype: torch.dtype,
) -> float:
    """One optimizer step on one batch with mixed precision (``torch.amp``).

    Gradients left from before are cleared. ``torch.autocast(device_type, dtype)`` covers the
    forward pass and the loss only; ``backward()`` and the optimizer step run outside it. With a
    scaler, the loss is scaled before ``backward()``, ``scaler.step`` takes the step (and skips it
    when the gradients hold inf or NaN), and ``scaler.update()`` adapts the scale after every
    step, skipped ones included. Without a scaler (bf16, whose range is float32's), the step is
    a plain ``backward()`` and ``optimizer.step()``.

    Args:
        model: the model, on the device the batch is on.
        optimizer: an optimizer over ``model``'s parameters.
        loss_fn: the loss of a batch, e.g. ``nn.CrossEntropyLoss()``.
        inputs: the batch's inputs, passed as ``model(inputs)``.
        targets: the batch's targets.
        scaler: a ``torch.amp.GradScaler`` (required for float16), or None.
        device_type: ``"cuda"``, ``"cpu"``, ``"mps"``...: where autocast applies.
        dtype: ``torch.float16`` or ``torch.bfloat16``.

    Returns:
        The batch's loss as a Python float, unscaled (inf or NaN when the forward pass
        overflowed; the scaler then skips the step).

    Raises:
        TypeError: ``scaler`` is neither a GradScaler nor None.
        ValueError: ``dtype`` is not a half-precision type, or float16 without a scaler.

    Example:
        >>> model = torch.nn.Linear(4, 2)
        >>> optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        >>> x, y = torch.randn(8, 4), torch.randint(0, 2, (8,))
        >>> loss = amp_step(model, optimizer, torch.nn.CrossEntropyLoss(), x, y,
        ...                 torch.amp.GradScaler("cpu"), "cpu", torch.float16)
    """
    _check_amp_dtype(dtype)
    _check_scaler(scaler, dtype)
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(device_type=device_type, dtype=dtype):  # forward and loss only
        loss = loss_fn(model(inputs), targets)
    if scaler is None:
        loss.backward()
        optimizer.step()
    else:
        scaler.scale(loss).backward()  # a larger loss: small fp16 gradients do not flush to 0
        scaler.step(optimizer)  # unscales, then steps unless a gradient is inf/NaN
        scaler.update()  # every step: halve after an overflow, grow after a quiet stretch
    return loss.item()

# %% ch07_clip_and_step points=4 feedback="passed"
import torch


def _check_scaler(scaler, dtype: torch.dtype) -> None:
    if scaler is not None and not isinstance(scaler, torch.amp.GradScaler):
        raise TypeError(
            f"scaler must be a torch.amp.GradScaler or None, got {type(scaler).__name__}. "
            "Create one per run with torch.amp.GradScaler(device_type)."
        )
    if scaler is None and dtype == torch.float16:
        raise ValueError(
            "dtype=torch.float16 needs a GradScaler (scaler=None was given): fp16 gradients "
            "underflow to zero without loss scaling. Pass torch.amp.GradScaler(device_type), or "
            "use torch.bfloat16, which needs none."
        )


def clip_and_step(
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    scaler: torch.amp.GradScaler | None,
    max_norm: float,
) -> float:
    """Clip the gradients of ``model`` to a total norm of ``max_norm``, then take the step.

    Call it after ``backward()`` of the loss, scaled by ``scaler`` when there is one. The norm
    that is measured and clipped is the norm of the true gradients: ``scaler.unscale_`` divides
    them by the scale first (they are otherwise ``scale`` times too large, and the clip would
    shrink them by that factor). The step then goes through the scaler, which skips it when a
    gradient is inf or NaN, and the scale is updated. Without a scaler nothing skips such a step
    for you (``optimizer.step()`` would write inf or NaN into the weights): the step is taken only
    when the measured norm is finite.

    Args:
        model: the model whose parameters' ``.grad`` hold the (scaled) gradients.
        optimizer: the optimizer over ``model``'s parameters.
        scaler: the ``torch.amp.GradScaler`` that scaled the loss, or None.
        max_norm: the largest total (2-)norm the gradients may have, > 0.

    Returns:
        The total norm of the true gradients before clipping, as a Python float (inf or NaN
        when a gradient held inf or NaN and the step was skipped, with a scaler or without).

    Raises:
        TypeError: ``scaler`` is neither a GradScaler nor None, or ``max_norm`` is not a number.
        ValueError: ``max_norm`` is not positive.

    Example:
        >>> model = torch.nn.Linear(4, 2)
        >>> optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        >>> scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
        >>> scaler.scale(model(torch.randn(8, 4)).pow(2).mean()).backward()
        >>> norm = clip_and_step(model, optimizer, scaler, max_norm=1.0)
    """
    _check_scaler(scaler, torch.bfloat16)
    if isinstance(max_norm, bool) or not isinstance(max_norm, (int, float)):
        raise TypeError(f"max_norm must be a positive number, got {max_norm!r}")
    if not max_norm > 0:
        raise ValueError(f"max_norm must be > 0, got {max_norm!r}")
    if scaler is not None:
        scaler.unscale_(optimizer)  # the true gradients, so that max_norm means what it says
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    if scaler is None:
        if torch.isfinite(norm):  # no scaler checks the gradients here: an inf one would stick
            optimizer.step()
    else:
        scaler.step(optimizer)  # already unscaled: steps unless a gradient is inf/NaN
        scaler.update()
    return norm.item()
