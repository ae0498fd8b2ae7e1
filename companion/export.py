"""Export a model to ONNX and check that ONNX Runtime computes what PyTorch computes.

Two calls: :func:`export_onnx` writes the file with the ``torch.export``-based exporter (batch
dimension dynamic, other axes dynamic where ``dynamic_shapes`` says so, model in eval mode),
:func:`verify_onnx` runs the ONNX checker and compares ONNX Runtime with eager PyTorch at several
sizes of every dynamic axis and, given a loader, on every real batch. ``onnx`` and
``onnxruntime`` are imported inside the functions that need them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import html
import inspect
import io
import logging
import math
import os
import re
import sys
import tempfile
import traceback
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from companion._extras import EXTRAS, need
from companion._loop_checks import check_loader
from companion.batches import check_batch_fn, inputs_and_targets

__all__ = ["ExportError", "VerificationError", "VerificationReport", "export_onnx", "verify_onnx"]

_TORCH_DIR = os.path.dirname(torch.__file__)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_FRAME = re.compile(
    r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)\n\s*(?P<code>\S.*)'
)


class ExportError(RuntimeError):
    """ONNX export failed; the message says why in plain words and what to try.

    Attributes:
        data_dependent: True when the cause is control flow on a tensor's value.
        location: ``(filename, line, source)`` of the offending user line, or None.
        exporter_output: what the exporter printed to stderr while failing (partial graphs).
    """

    def __init__(
        self,
        message: str,
        *,
        data_dependent: bool = False,
        location: tuple[str, int, str] | None = None,
        exporter_output: str = "",
    ) -> None:
        super().__init__(message)
        self.data_dependent = data_dependent
        self.location = location
        self.exporter_output = exporter_output


class VerificationError(AssertionError):
    """ONNX Runtime disagrees with eager PyTorch (or the ONNX checker failed).

    Attributes:
        report: the :class:`VerificationReport` with the per-shape differences.
    """

    def __init__(self, message: str, report: VerificationReport) -> None:
        super().__init__(message)
        self.report = report


# --------------------------------------------------------------------------- shared helpers


def as_inputs(example_inputs: Any, name: str = "example_inputs") -> tuple[torch.Tensor, ...]:
    inputs = (example_inputs,) if isinstance(example_inputs, torch.Tensor) else example_inputs
    if not isinstance(inputs, (tuple, list)) or not inputs:
        raise TypeError(
            f"{name} must be a tensor or a non-empty tuple of tensors, got "
            f"{type(example_inputs).__name__}; pass e.g. torch.randn(1, 3, 32, 32)."
        )
    for i, item in enumerate(inputs):
        if not isinstance(item, torch.Tensor):
            raise TypeError(
                f"{name}[{i}] must be a torch.Tensor, got {type(item).__name__}; non-tensor "
                "arguments are fixed at export time, so bind them in the model instead."
            )
    return tuple(t.detach().cpu() for t in inputs)


def check_exportable(model: Any) -> None:
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}.")
    devices = {t.device for t in [*model.parameters(), *model.buffers()]} - {torch.device("cpu")}
    if devices:
        raise ValueError(
            f"model has tensors on {sorted(map(str, devices))}; export, verification and ONNX "
            "Runtime here work on the CPU: pass model.cpu() (a trained model's weights are the "
            "same there)."
        )


def _check_batch(inputs: tuple[torch.Tensor, ...]) -> int:
    sizes = {t.shape[0] if t.dim() else None for t in inputs}
    if None in sizes or len(sizes) != 1:
        shapes = [tuple(t.shape) for t in inputs]
        raise ValueError(
            f"example_inputs have shapes {shapes}: a dynamic batch needs every input to share its "
            "first dimension; pass dynamic_batch=False to export fixed shapes."
        )
    return sizes.pop()


def _is_axis_spec(value: Any) -> bool:
    """A ``torch.export.Dim``, a hint (``Dim.AUTO``, ``Dim.DYNAMIC``, ``Dim.STATIC``) or None."""
    hint = type(torch.export.Dim.AUTO)
    dim = torch.export.Dim if isinstance(torch.export.Dim, type) else type(torch.export.Dim("d"))
    return value is None or isinstance(value, (dim, hint))


def _forward_names(model: nn.Module, count: int) -> list[str]:
    """The names of ``forward``'s first ``count`` parameters (what the inputs bind to)."""
    params = list(inspect.signature(model.forward).parameters.values())
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return positional[:count]


def _dynamic_shapes(
    model: nn.Module, inputs: tuple[torch.Tensor, ...], dynamic_shapes: Any, dynamic_batch: bool
) -> tuple[dict[int, Any], ...] | None:
    """``dynamic_shapes`` as one ``{axis: Dim}`` per input, with the batch axis added."""
    names = _forward_names(model, len(inputs))
    if dynamic_shapes is None:
        specs: list[Any] = [None] * len(inputs)
    elif isinstance(dynamic_shapes, dict):
        unknown = [k for k in dynamic_shapes if k not in names]
        if unknown or len(names) < len(inputs):
            raise ValueError(
                f"dynamic_shapes: keys {unknown} are not among the names of forward's "
                f"parameters that example_inputs bind to, {names}; key each input by its "
                f"parameter name, or pass a tuple with one entry per input."
            )
        specs = [dynamic_shapes.get(name) for name in names]
    elif isinstance(dynamic_shapes, (tuple, list)):
        if len(dynamic_shapes) != len(inputs):
            raise ValueError(
                f"dynamic_shapes has {len(dynamic_shapes)} entries but example_inputs has "
                f"{len(inputs)} tensors; give one entry per input ({{axis: Dim}} or None)."
            )
        specs = list(dynamic_shapes)
    else:
        raise TypeError(
            f"dynamic_shapes must be a dict keyed by forward's parameter names or a tuple with "
            f"one entry per input, got {type(dynamic_shapes).__name__}; e.g. "
            f"{{'x': {{2: torch.export.Dim('time')}}}}."
        )
    out = []
    for i, (spec, t) in enumerate(zip(specs, inputs)):
        label = f"dynamic_shapes[{names[i]!r}]" if i < len(names) else f"dynamic_shapes[{i}]"
        if spec is None:
            spec = {}
        if not isinstance(spec, dict):
            raise TypeError(
                f"{label} must be a dict {{axis: torch.export.Dim(...)}} or None, got "
                f"{type(spec).__name__} {spec!r}."
            )
        axes = {}
        for axis, dim in spec.items():
            if (
                isinstance(axis, bool)
                or not isinstance(axis, int)
                or not -t.dim() <= axis < t.dim()
            ):
                raise ValueError(
                    f"{label}: axis {axis!r} does not exist in an input of shape "
                    f"{tuple(t.shape)}; axes are ints from 0 to {t.dim() - 1}."
                )
            if not _is_axis_spec(dim):
                raise TypeError(
                    f"{label}[{axis}] must be a torch.export.Dim (e.g. Dim('time', max=4096)), "
                    f"Dim.AUTO, Dim.DYNAMIC, Dim.STATIC or None, got {dim!r}."
                )
            axes[axis % t.dim()] = dim
        out.append(axes)
    if dynamic_batch:
        _check_batch(inputs)
        batch = torch.export.Dim("batch", min=1)
        for axes in out:
            axes.setdefault(0, batch)
    return tuple(out) if any(out) else None


def _axis_name(dim: Any, input_name: str, axis: int) -> str | None:
    """The name a declared dynamic axis gets in the file; None when it may stay fixed."""
    if dim is None or isinstance(dim, type(torch.export.Dim.AUTO)):
        if dim is torch.export.Dim.DYNAMIC:
            return f"{input_name} axis {axis}"
        return None
    return dim.__name__


def at_batch(inputs: tuple[torch.Tensor, ...], batch_size: int) -> tuple[torch.Tensor, ...]:
    """The example rows repeated (then cut) to ``batch_size`` rows."""
    out = []
    for t in inputs:
        reps = math.ceil(batch_size / t.shape[0])
        out.append(t.repeat(reps, *([1] * (t.dim() - 1)))[:batch_size].contiguous())
    return tuple(out)


def flatten_outputs(outputs: Any) -> list[torch.Tensor]:
    if isinstance(outputs, torch.Tensor):
        return [outputs]
    if isinstance(outputs, dict):
        outputs = list(outputs.values())
    if isinstance(outputs, (tuple, list)):
        return [t for item in outputs for t in flatten_outputs(item)]
    return []


def to_numpy(inputs: Sequence[torch.Tensor]) -> list[np.ndarray]:
    return [t.detach().cpu().contiguous().numpy() for t in inputs]


@contextlib.contextmanager
def eval_mode(model: nn.Module) -> Iterator[nn.Module]:
    """Eval mode inside the block; every submodule's own training flag restored afterwards."""
    modes = [(module, module.training) for module in model.modules()]
    model.eval()
    try:
        yield model
    finally:
        for module, training in modes:
            module.training = training


def first_line(exc: BaseException) -> str:
    text = _ANSI.sub("", str(exc)).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"[:300]


def _eager(model: nn.Module, inputs: tuple[torch.Tensor, ...]) -> list[torch.Tensor]:
    with eval_mode(model), torch.inference_mode():
        return [t.detach().cpu() for t in flatten_outputs(model(*inputs))]


def ort_session(path: str | os.PathLike, *, num_threads: int | None = None) -> Any:
    """An ONNX Runtime CPU session configured like the benchmark's (see ``companion.inference``)."""
    ort = need("onnxruntime", "onnx", "running an ONNX file")

    options = ort.SessionOptions()
    options.intra_op_num_threads = num_threads or torch.get_num_threads()
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # Worker threads spin while a run lasts (fast hand-over between operators) but stop as
    # soon as it returns, so they do not steal cores from PyTorch or other work between calls.
    options.add_session_config_entry("session.intra_op.allow_spinning", "1")
    options.add_session_config_entry("session.force_spinning_stop", "1")
    return ort.InferenceSession(os.fspath(path), options, providers=["CPUExecutionProvider"])


# --------------------------------------------------------------------------- export


class _DropMessage(logging.Filter):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def filter(self, record: logging.LogRecord) -> bool:
        return self.text not in record.getMessage()


@contextlib.contextmanager
def _quiet_exporter(buffer: io.StringIO) -> Iterator[None]:
    """Collect what torch.export prints to stderr (partial graphs on failure) into ``buffer``.

    Also silences what the exporter says on every export that no model can act on (each
    filter below gives its reason); whatever concerns the model still shows.
    """
    # This torch warning fires before we locate the user's line ourselves; it only misleads.
    shapes_log = logging.getLogger("torch.fx.experimental.symbolic_shapes")
    drop = _DropMessage("Unable to find user code corresponding to")
    # The exporter registers translations for torchvision's operators (nms, roi_align, ...)
    # on every export and logs one line for each when torchvision is not installed; a
    # model that used them could not have run without torchvision, so the lines are noise.
    registry_log = logging.getLogger("torch.onnx._internal.exporter._registration")
    no_vision = _DropMessage("torchvision is not installed. Skipping")
    shapes_log.addFilter(drop)
    registry_log.addFilter(no_vision)
    try:
        with contextlib.redirect_stderr(buffer), warnings.catch_warnings():
            # One Dim shared by several inputs (every input's "batch", a sequence and its
            # mask) is one axis on purpose; torch warns that it cannot name it twice.
            warnings.filterwarnings("ignore", r"# The axis name: .* will not be used, since")
            # torch's own decompositions (nn.GRU's and nn.LSTM's among them) call its
            # deprecated torch._check_is_size while tracing; nothing in the model calls it.
            warnings.filterwarnings("ignore", "_check_is_size will be removed", FutureWarning)
            # torch 2.13's exporter tests its own pytree specs with the deprecated
            # isinstance(treespec, LeafSpec) (torch 2.14 no longer does); the model has no part.
            warnings.filterwarnings("ignore", r"`isinstance\(treespec, LeafSpec\)`", FutureWarning)
            # nn.RNN/GRU/LSTM re-assign their _flat_weights list inside forward (torch's code,
            # not the model's); the exporter reads it as attributes assigned during export.
            warnings.filterwarnings(
                "ignore", r"The tensor attributes (self\.[\w.]+\._flat_weights\[\d+\](, )?)+ were"
            )
            # Tracing a recurrent layer, torch's dynamo probes .grad of its own intermediate
            # tensors and hides the warning by swapping warnings.showwarning, which does not
            # work when warnings are errors (python -W error, pytest's filterwarnings=error):
            # the export of any nn.GRU or nn.LSTM would then fail on a line of torch's.
            warnings.filterwarnings(
                "ignore", r"The \.grad attribute of a Tensor that is not a leaf", UserWarning
            )
            yield
    finally:
        shapes_log.removeFilter(drop)
        registry_log.removeFilter(no_vision)


def _forget_traced_loops() -> None:
    """Drop what torch cached from earlier exports that would fix a dynamic axis now.

    Both caches belong to torch, not to a model, and only save work: emptying them changes
    nothing but the time of the next lookup or trace. Without this, exporting a recurrent
    model with a dynamic length worked once per process: the next export of any recurrent model
    (a notebook cell run again, a model exported first with a fixed length) fixed the length to
    the example's. With dynamic shapes, the exporter swaps in a loop-based decomposition of GRU
    and LSTM by editing the operators' kernel tables without clearing their dispatch caches,
    which a previous export filled with the unrolled one; and dynamo keeps the graph it traced
    for torch's own loop wrapper (``torch._higher_order_ops``) with guards that pass again for
    an example of the same length, so the sizes it fixed come back.
    """
    for name in ("gru", "lstm"):
        overload = getattr(getattr(torch.ops.aten, name, None), "input", None)
        cache = getattr(overload, "_dispatch_cache", None)
        if isinstance(cache, dict):
            cache.clear()
    try:
        import torch._higher_order_ops as hops
        from torch._C._dynamo.eval_frame import reset_code
        from torch._dynamo.convert_frame import input_codes
    except ImportError:  # another torch: nothing of the kind to forget
        return
    folder = os.path.dirname(hops.__file__) + os.sep
    for ref in list(getattr(input_codes, "seen", [])):
        code = ref()
        if code is not None and code.co_filename.startswith(folder):
            reset_code(code)


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return seen


def _is_data_dependent(exc: BaseException, *, by_text: bool = False) -> bool:
    from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode

    if by_text:
        return "data-dependent" in str(exc) or "data dependent" in str(exc)
    error_type = getattr(getattr(exc, "error_type", None), "name", "")
    return isinstance(exc, GuardOnDataDependentSymNode) or error_type == "DYNAMIC_CONTROL_FLOW"


def _user_location(exc: BaseException) -> tuple[str, int, str] | None:
    """The last frame outside torch named in the message, else in the traceback."""
    found = [
        (m["file"], int(m["line"]), m["code"].strip())
        for m in _FRAME.finditer(str(exc))
        if not m["file"].startswith(_TORCH_DIR)
    ]
    if found:
        return found[-1]
    frames = [
        (f.filename, f.lineno or 0, (f.line or "").strip())
        for f in traceback.extract_tb(exc.__traceback__)
        if not f.filename.startswith(_TORCH_DIR) and f.filename != __file__
    ]
    return frames[-1] if frames else None


def _data_dependent_message(model: nn.Module, where: tuple[str, int, str] | None) -> str:
    line = (
        f'\n  File "{where[0]}", line {where[1]}\n    {where[2]}\n'
        if where
        else " (the line could not be located: look in forward for `if`, `while`, `int()`, "
        "`.item()` or `bool()` applied to a tensor).\n"
    )
    return (
        f"{type(model).__name__} cannot be exported: its forward decides something from the "
        f"value of a tensor (an `if` or `while` on a tensor, `int()`/`.item()`), here:{line}"
        "torch.export records one graph for every possible input, so it cannot choose from a "
        "value it only knows at run time. Rewrite it so that the graph holds the choice:\n"
        "  - torch.where(condition, a, b): compute both results and select element-wise "
        "(simplest; both branches must give the same shape);\n"
        "  - torch.cond(pred, true_fn, false_fn, (x,)): keeps a real if/else in the exported "
        "graph (both functions must return tensors of the same shape and dtype).\n"
        "Conditions on Python values or shapes (`if self.use_bias:`, `if x.dim() == 3:`) are "
        "fine. The legacy exporter (legacy=True) does not fail here: it silently records only "
        "the branch that the example input took."
    )


def _other_failure_message(model: nn.Module, exc: BaseException) -> str:
    text = _ANSI.sub("", str(exc)).strip() or type(exc).__name__
    tips = [
        "check that model(*example_inputs) runs in eval mode and returns tensors;",
        "if the message mentions constraints or specialization, the model fixes the size of an "
        "axis declared dynamic: the batch (x.view(4, -1): use x.flatten(1) or "
        "x.view(x.shape[0], -1), or dynamic_batch=False) or one in dynamic_shapes (a reshape "
        "built from the example's length: use x.shape[2]; or drop that axis); inputs whose "
        "axes must be equal share one Dim object;",
        "if an operator is unsupported, try a newer opset (opset=...) or rewrite that piece with "
        "common tensor operations;",
        "run torch.export.export(model, example_inputs) alone to see which step fails, or pass "
        "legacy=True to compare with the old TorchScript exporter.",
    ]
    return (
        f"ONNX export of {type(model).__name__} failed.\n\n{type(exc).__name__}: {text}\n\n"
        "What to try:\n" + "\n".join(f"  - {tip}" for tip in tips)
    )


def _export_error(model: nn.Module, exc: BaseException, output: str) -> ExportError:
    chain = _chain(exc)
    causes = [c for c in chain if _is_data_dependent(c)] or [
        c for c in chain if _is_data_dependent(c, by_text=True)
    ]
    if not causes:
        return ExportError(_other_failure_message(model, exc), exporter_output=output)
    where = _user_location(causes[-1]) or _user_location(causes[0])
    return ExportError(
        _data_dependent_message(model, where),
        data_dependent=True,
        location=where,
        exporter_output=output,
    )


def _names(names: Sequence[str] | None, count: int, stem: str, argument: str) -> list[str]:
    if names is None:
        return [stem] if count == 1 else [f"{stem}_{i}" for i in range(count)]
    names = list(names)
    if len(names) != count or not all(isinstance(n, str) for n in names):
        raise ValueError(f"{argument} must be {count} strings (one per {stem}), got {names!r}.")
    return names


def export_onnx(
    model: nn.Module,
    example_inputs: torch.Tensor | Sequence[torch.Tensor],
    path: str | os.PathLike,
    *,
    dynamic_batch: bool = True,
    dynamic_shapes: dict[str, Any] | Sequence[Any] | None = None,
    input_names: Sequence[str] | None = None,
    output_names: Sequence[str] | None = None,
    opset: int | None = None,
    legacy: bool = False,
) -> Path:
    """Export ``model`` to an ONNX file with the ``torch.export``-based exporter.

    The model is put in eval mode for the export and every submodule gets its previous mode
    back afterwards. The weights are stored inside the file (models over 2 GB get a ``.data``
    file next to it). The first dimension of every input (and output) is dynamic unless
    ``dynamic_batch=False``; an example batch of 1 is fine. Other axes (a sequence's length,
    an image's height) are dynamic where ``dynamic_shapes`` says so, and fixed to the
    example's sizes everywhere else.

    Args:
        model: the ``nn.Module`` to export; its tensors must be on the CPU.
        example_inputs: a tensor or a tuple of tensors the model accepts, passed as
            ``model(*example_inputs)``; their shapes are the sizes fixed in the file.
        path: where to write the ``.onnx`` file; parent folders are created.
        dynamic_batch: make the first axis of every input symbolic (named ``"batch"``) unless
            ``dynamic_shapes`` gives that axis a Dim of its own; False fixes it to the
            example's batch size.
        dynamic_shapes: further dynamic axes in ``torch.export``'s own form: a dict keyed by
            the names of ``forward``'s parameters, or a tuple with one entry per input, each
            entry ``{axis: torch.export.Dim("name", min=..., max=...)}`` (``Dim.AUTO`` and
            ``Dim.DYNAMIC`` work too) or None. One Dim object used for several inputs makes
            their axes one size (a sequence and its mask); its name is the axis's name in the
            file, which :func:`verify_onnx` then tries at several sizes.
        input_names: names of the graph inputs; default ``"inputs"`` (``"inputs_0"``, ... if
            several).
        output_names: names of the graph outputs; default ``"outputs"`` (``"outputs_0"``, ...).
        opset: ONNX opset version; None uses the exporter's default.
        legacy: use the deprecated TorchScript exporter with ``dynamic_axes`` instead (kept for
            comparison: it traces one run and silently keeps only the branch that run took).

    Returns:
        The path of the written file.

    Raises:
        TypeError: ``model``, ``example_inputs`` or ``dynamic_shapes`` has the wrong type.
        ValueError: the model is not on the CPU, the inputs do not share a batch dimension,
            ``dynamic_shapes`` names an input or an axis that does not exist, the names do not
            match, or the model fails on ``example_inputs``.
        OSError: ``path`` is a folder or cannot be written (checked before exporting).
        ExportError: the exporter failed (for control flow on tensor values the message points
            at the line and names ``torch.where`` and ``torch.cond``), or the model's code fixed
            the size of an axis declared dynamic.

    Example:
        >>> model = torch.nn.Linear(4, 2)
        >>> export_onnx(model, torch.randn(1, 4), "/tmp/linear.onnx").name
        'linear.onnx'
        >>> conv = torch.nn.Conv1d(1, 4, 3, padding=1)  # (B, 1, T) -> (B, 4, T)
        >>> time = torch.export.Dim("time", min=2, max=4096)
        >>> path = export_onnx(conv, torch.randn(2, 1, 40), "/tmp/conv.onnx",
        ...                    dynamic_shapes={"input": {2: time}})
    """
    for package in EXTRAS["onnx"]:  # torch.onnx's exporter imports onnxscript and onnx lazily
        need(package, "onnx", "companion.export_onnx")
    check_exportable(model)
    inputs = as_inputs(example_inputs)
    if opset is not None and (not isinstance(opset, int) or opset < 7):
        raise ValueError(f"opset must be an int >= 7 or None, got {opset!r}.")
    path = _check_destination(path)
    shapes = _dynamic_shapes(model, inputs, dynamic_shapes, dynamic_batch)
    try:
        outputs = _eager(model, inputs)
    except Exception as exc:
        shapes = [tuple(t.shape) for t in inputs]
        raise ValueError(
            f"example_inputs: model(*example_inputs) failed on shapes {shapes} with "
            f"{type(exc).__name__}: {exc}. Export needs inputs that the model accepts."
        ) from exc
    in_names = _names(input_names, len(inputs), "inputs", "input_names")
    out_names = _names(output_names, len(outputs), "outputs", "output_names")

    with eval_mode(model):
        if legacy:
            try:
                _export_legacy(model, inputs, path, in_names, out_names, shapes, opset)
            except Exception as exc:
                raise _export_error(model, exc, "") from exc
            return path
        buffer = io.StringIO()
        if shapes is not None:
            _forget_traced_loops()
        try:
            with _quiet_exporter(buffer):
                torch.onnx.export(
                    model,
                    inputs,
                    path,
                    dynamo=True,
                    dynamic_shapes=shapes,
                    input_names=in_names,
                    output_names=out_names,
                    opset_version=opset,
                    external_data=False,
                    optimize=True,
                    verbose=False,
                )
        except OSError as exc:  # the file could not be written: not the model's fault
            raise type(exc)(f"path: cannot write {os.fspath(path)!r}: {exc}") from exc
        except Exception as exc:
            raise _export_error(model, exc, buffer.getvalue()) from exc
        if buffer.getvalue():
            sys.stderr.write(buffer.getvalue())
    if shapes is not None:
        _check_dynamic(model, path, inputs, in_names, shapes)
    return path


def _check_destination(path) -> Path:
    """Fail before exporting when ``path`` cannot be written: a folder, a read-only place."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a file path (str or Path), got {type(path).__name__}")
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(
            f"path: {os.fspath(path)!r} is a folder; pass a file name such as "
            f"{os.fspath(path / 'model.onnx')!r}"
        )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path.parent):
            pass
    except OSError as err:
        raise type(err)(
            f"path: cannot write in {os.fspath(path.parent)!r} ({err.strerror or err}); "
            f"choose a writable folder"
        ) from None
    return path


def _check_dynamic(
    model: nn.Module,
    path: Path,
    inputs: tuple[torch.Tensor, ...],
    in_names: list[str],
    shapes: tuple[dict[int, Any], ...],
) -> None:
    """The exporter silently fixes an axis when the code needs its size; say so instead."""
    onnx = need("onnx", "onnx", "companion.export_onnx")

    graph = onnx.load(os.fspath(path), load_external_data=False).graph
    fixed = []
    for value, t, name, axes in zip(graph.input, inputs, in_names, shapes):
        dims = value.type.tensor_type.shape.dim
        for axis, dim in sorted(axes.items()):
            declared = _axis_name(dim, name, axis)
            if declared is not None and axis < len(dims) and not dims[axis].dim_param:
                fixed.append((name, axis, declared, t.shape[axis]))
    if not fixed:
        return
    if all(axis == 0 for _, axis, _, _ in fixed):
        batch_size = fixed[0][3]
        raise ExportError(
            f"dynamic_batch=True, but the exporter fixed the batch size of "
            f"{[name for name, *_ in fixed]} to {batch_size}: {type(model).__name__}'s forward "
            "uses the batch size as a constant (e.g. x.view(4, -1), torch.zeros(4, ...), a "
            "reshape built from the example's size). Write it in terms of the input instead: "
            "x.flatten(1), x.view(x.shape[0], -1), torch.zeros(x.shape[0], ...). Or pass "
            f"dynamic_batch=False if a batch of {batch_size} is intended. The file at "
            f"{os.fspath(path)!r} has that fixed batch size."
        )
    unrolled = [
        type(m).__name__
        for m in model.modules()
        if isinstance(m, nn.RNNBase) and m.mode not in ("GRU", "LSTM")
    ]
    rnn_hint = (
        f" If nothing else uses the length, the {unrolled[0]} does: torch's exporter keeps "
        "the length of nn.GRU and nn.LSTM dynamic but unrolls nn.RNN over the example's "
        "steps. Use an nn.GRU, or legacy=True, which exports it as ONNX's own recurrent "
        "operator whose length stays dynamic (check that file with verify_onnx and a loader)."
        if unrolled
        else ""
    )
    listed = "; ".join(
        f"{name} axis {axis} ({declared!r}) fixed to {size}" for name, axis, declared, size in fixed
    )
    raise ExportError(
        f"dynamic_shapes declares axes dynamic that the exporter fixed: {listed}. "
        f"{type(model).__name__}'s forward uses that size as a constant (a reshape or a view "
        "built from the example's shape, torch.zeros(40, ...), a Linear over a flattened "
        "sequence axis). Write it in terms of the input (x.shape[2], x.flatten(1)), or drop "
        f"the axis from dynamic_shapes if that size is intended.{rnn_hint} The file at "
        f"{os.fspath(path)!r} has the fixed sizes."
    )


def _export_legacy(model, inputs, path, in_names, out_names, shapes, opset) -> None:
    axes = None
    if shapes is not None:
        hint = type(torch.export.Dim.AUTO)
        axes = {
            name: {
                axis: f"{name}_{axis}" if isinstance(dim, hint) else dim.__name__
                for axis, dim in spec.items()
                if dim is not None and dim is not torch.export.Dim.STATIC
            }
            for name, spec in zip(in_names, shapes)
        }
        if all(0 in spec for spec in shapes):  # the outputs' batch follows the inputs'
            axes.update({name: {0: "batch"} for name in out_names})
    with warnings.catch_warnings():
        # legacy=True is an explicit request for the deprecated exporter (documented above);
        # torch's notice would point at this file, and the second is torch calling its own
        # deprecated helper. Its TracerWarnings (the point of the comparison) still show.
        warnings.filterwarnings(
            "ignore", "You are using the legacy TorchScript", DeprecationWarning
        )
        warnings.filterwarnings("ignore", "The feature will be removed", DeprecationWarning)
        # nn.RNN, nn.GRU and nn.LSTM check their inputs' sizes in Python (torch's code): the
        # tracer warns on each check, about a branch no model chose.
        warnings.filterwarnings(
            "ignore", category=torch.jit.TracerWarning, module=r"torch\.nn\.modules\.rnn"
        )
        # Said on every recurrent layer, whatever the model (no condition in torch's code): a
        # batch of 1 or initial states as inputs avoid a batch fixed by the initial state;
        # verify_onnx tries several batch sizes, which shows whether this file has one.
        warnings.filterwarnings("ignore", r"Exporting a model to ONNX with a batch_size other")
        torch.onnx.export(
            model,
            inputs,
            path,
            dynamo=False,
            input_names=in_names,
            output_names=out_names,
            dynamic_axes=axes,
            opset_version=opset,
        )


# --------------------------------------------------------------------------- verification


@dataclasses.dataclass
class ShapeCheck:
    """ONNX Runtime against eager PyTorch at one size of each dynamic axis.

    ``sizes`` maps each axis name (``"batch"``, and the names ``dynamic_shapes`` gave) to the
    size tried; ``batch_size`` repeats the batch's.
    """

    batch_size: int
    input_shapes: list[tuple[int, ...]]
    max_abs_diff: float | None
    max_rel_diff: float | None
    passed: bool
    error: str | None = None
    sizes: dict[str, int] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class LoaderCheck:
    """ONNX Runtime against eager PyTorch on every batch of a loader: the worst difference.

    ``worst_batch`` is the 1-based index of the batch with the largest absolute difference.
    """

    batches: int
    samples: int
    max_abs_diff: float | None
    max_rel_diff: float | None
    worst_batch: int | None
    passed: bool
    error: str | None = None


@dataclasses.dataclass
class VerificationReport:
    """What :func:`verify_onnx` found; ``passed`` is True when everything agreed.

    Attributes:
        path: the ONNX file checked.
        checker: ``"passed"``, or the ONNX checker's first line of complaint.
        checks: one ``ShapeCheck`` per set of sizes tried from ``example_inputs`` (its
            ``sizes``, ``input_shapes``, ``max_abs_diff``, ``max_rel_diff``, ``passed`` and
            ``error``); empty without ``example_inputs``.
        rtol: the relative tolerance the comparisons used.
        atol: the absolute tolerance the comparisons used.
        loader: the ``LoaderCheck`` over a loader's batches (``batches``, ``samples``, the
            worst ``max_abs_diff`` and ``max_rel_diff``, ``worst_batch``, ``passed``,
            ``error``), or None without ``loader``.
    """

    path: str
    checker: str
    checks: list[ShapeCheck]
    rtol: float
    atol: float
    loader: LoaderCheck | None = None

    @property
    def passed(self) -> bool:
        return (
            self.checker == "passed"
            and all(c.passed for c in self.checks)
            and (self.loader is None or self.loader.passed)
        )

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "passed": self.passed}

    def _rows(self) -> list[list[str]]:
        rows = []
        for c in self.checks:
            sizes = " ".join(f"{k}={v}" for k, v in c.sizes.items()) or f"batch={c.batch_size}"
            shapes = ", ".join("x".join(map(str, s)) for s in c.input_shapes)
            verdict = "pass" if c.passed else f"FAIL {c.error or ''}".strip()
            rows.append([sizes, shapes, _sci(c.max_abs_diff), _sci(c.max_rel_diff), verdict])
        return rows

    def _loader_line(self) -> str:
        c = self.loader
        if c is None:
            return ""
        worst = f" (worst: batch {c.worst_batch})" if c.worst_batch else ""
        verdict = "pass" if c.passed else f"FAIL {c.error or ''}".strip()
        return (
            f"loader: {c.batches} batches, {c.samples} samples; max abs diff "
            f"{_sci(c.max_abs_diff)}{worst}, max rel diff {_sci(c.max_rel_diff)}; {verdict}"
        )

    def __str__(self) -> str:
        head = ["sizes", "input shapes", "max abs diff", "max rel diff", "result"]
        lines = [
            f"ONNX verification of {self.path}: {'PASSED' if self.passed else 'FAILED'}",
            f"checker (full_check): {self.checker}; tolerance |ort - eager| <= "
            f"{self.atol:g} + {self.rtol:g} * |eager|",
        ]
        if self.checks:
            rows = [head, *self._rows()]
            widths = [max(len(r[i]) for r in rows) for i in range(len(head) - 1)]
            for r in rows:
                lines.append("  ".join(cell.ljust(w) for cell, w in zip(r, widths)) + "  " + r[-1])
        if self.loader is not None:
            lines.append(self._loader_line())
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        head = "".join(
            f"<th>{h}</th>" for h in ["sizes", "input shapes", "max abs diff", "max rel diff"]
        )
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>"
            for row in self._rows()
        )
        verdict = "PASSED" if self.passed else "FAILED"
        table = f"<table><tr>{head}<th>result</th></tr>{body}</table>" if self.checks else ""
        loader = f"<p>{html.escape(self._loader_line())}</p>" if self.loader else ""
        return (
            f"<p>ONNX verification of <code>{html.escape(self.path)}</code>: <b>{verdict}</b> "
            f"(checker: {html.escape(self.checker)})</p>{table}{loader}"
        )


def _sci(value: float | None) -> str:
    return "-" if value is None else f"{value:.2e}"


def _compare(
    ort_outputs: list[np.ndarray], eager: list[torch.Tensor], rtol: float, atol: float
) -> tuple[float, float, bool, str | None]:
    if len(ort_outputs) != len(eager):
        return math.inf, math.inf, False, f"{len(ort_outputs)} outputs vs {len(eager)} in eager"
    max_abs = max_rel = 0.0
    ok = True
    for got, want in zip(ort_outputs, eager):
        want = want.numpy()
        if got.shape != want.shape:
            return math.inf, math.inf, False, f"shape {got.shape} vs eager {want.shape}"
        got64, want64 = got.astype(np.float64), want.astype(np.float64)
        if not (np.isfinite(got64).all() and np.isfinite(want64).all()):
            return math.nan, math.nan, False, "NaN or inf in the outputs"
        diff = np.abs(got64 - want64)
        if diff.size:
            max_abs = max(max_abs, float(diff.max()))
            nonzero = want64 != 0
            if nonzero.any():
                max_rel = max(max_rel, float((diff[nonzero] / np.abs(want64[nonzero])).max()))
            ok = ok and bool(np.all(diff <= atol + rtol * np.abs(want64)))
    return max_abs, max_rel, ok, None


def _resized(t: torch.Tensor, axis: int, size: int) -> torch.Tensor:
    """``t`` tiled (then cut) along ``axis`` to ``size``: the example's values, another length."""
    reps = [1] * t.dim()
    reps[axis] = math.ceil(size / t.shape[axis])
    return t.repeat(*reps).narrow(axis, 0, size).contiguous()


def _symbols(file_shapes: list[list], inputs: tuple[torch.Tensor, ...]) -> dict[str, list]:
    """The file's symbolic axes other than the batch: ``{name: [(input, axis), ...]}``."""
    found: dict[str, list] = {}
    for i, (dims, t) in enumerate(zip(file_shapes, inputs)):
        if len(dims) != t.dim():
            continue
        for axis, dim in enumerate(dims):
            if axis and isinstance(dim, str):
                found.setdefault(dim, []).append((i, axis))
    batch_names = {dims[0] for dims in file_shapes if dims and isinstance(dims[0], str)}
    return {name: where for name, where in found.items() if name not in batch_names}


def _size_plan(
    inputs: tuple[torch.Tensor, ...],
    file_shapes: list[list],
    batch_sizes: list[int],
    sizes: Mapping[str, Sequence[int]] | None,
) -> tuple[str, dict[str, list], list[tuple[int, dict[str, int]]]]:
    """(batch name, symbols, [(batch size, {symbol: size})]) to try, in order."""
    batch_name = next(
        (dims[0] for dims in file_shapes if dims and isinstance(dims[0], str)), "batch"
    )
    symbols = _symbols(file_shapes, inputs)
    sizes = dict(sizes or {})
    for name, values in sizes.items():
        if name == batch_name:
            raise ValueError(
                f"sizes[{name!r}]: {name!r} is the file's batch axis; give its sizes with "
                f"batch_sizes=..."
            )
        if name not in symbols:
            raise ValueError(
                f"sizes has {name!r}, which is not a dynamic axis of the file; its dynamic "
                f"axes besides the batch are {sorted(symbols)} (named by export_onnx's "
                f"dynamic_shapes)."
            )
        if (
            isinstance(values, (str, bytes))
            or not isinstance(values, Sequence)
            or not values
            or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in values)
        ):
            raise ValueError(f"sizes[{name!r}] must be positive ints, got {values!r}.")
    example = {name: inputs[i].shape[axis] for name, [(i, axis), *_] in symbols.items()}
    tries = {
        name: list(sizes.get(name, sorted({max(1, n // 2), n, 2 * n})))
        for name, n in example.items()
    }
    plan = [(b, dict(example)) for b in batch_sizes]
    example_batch = inputs[0].shape[0] if inputs[0].dim() else 1
    for name, values in tries.items():
        plan += [(example_batch, {**example, name: n}) for n in values if n != example[name]]
    if symbols:
        biggest = max(*batch_sizes, example_batch)
        largest = (biggest, {name: max(values) for name, values in tries.items()})
        if largest not in plan:
            plan.append(largest)
    return batch_name, symbols, plan


def _fixed_axes_hint(file_shapes: list[list], batch: tuple[torch.Tensor, ...], names) -> str:
    """Which fixed axis of the file the batch does not fit, and how to export it dynamic."""
    for name, dims, t in zip(names, file_shapes, batch):
        for axis, (dim, size) in enumerate(zip(dims, t.shape)):
            if isinstance(dim, int) and dim != size:
                if axis == 0:
                    return (
                        f"; the file fixes the batch of {name!r} to {dim}: exported with "
                        "dynamic_batch=False?"
                    )
                return (
                    f"; the file fixes axis {axis} of {name!r} to {dim}, this batch has "
                    f"{size}: export with dynamic_shapes declaring that axis, e.g. "
                    f"{{{axis}: torch.export.Dim('length')}}"
                )
    return ""


def _run_check(session, names, file_shapes, model, batch, rtol, atol):
    """(max abs diff, max rel diff, passed, error) of ONNX Runtime vs eager on one batch."""
    if len(names) != len(batch):
        return None, None, False, f"the file has {len(names)} inputs, the batch has {len(batch)}"
    try:
        got = session.run(None, dict(zip(names, to_numpy(batch))))
    except Exception as exc:
        hint = _fixed_axes_hint(file_shapes, batch, names)
        return None, None, False, f"ONNX Runtime failed ({first_line(exc)}){hint}"
    try:
        want = _eager(model, batch)
    except Exception as exc:
        return (
            None,
            None,
            False,
            (
                f"PyTorch itself fails at these sizes ({first_line(exc)}); choose sizes the model "
                "accepts with sizes={...} or batch_sizes=..."
            ),
        )
    return _compare(got, want, rtol, atol)


def _check_loader(session, names, file_shapes, model, loader, batch_fn, rtol, atol):
    worst_abs, worst_rel, worst_batch, ok, batches, samples = 0.0, 0.0, None, True, 0, 0
    for i, batch in enumerate(loader):
        inputs, _ = inputs_and_targets(batch, i, batch_fn, "verify_onnx")
        inputs = as_inputs(inputs, f"the inputs of loader batch {i + 1}")
        batches += 1
        samples += inputs[0].shape[0] if inputs[0].dim() else 1
        abs_diff, rel_diff, passed, error = _run_check(
            session, names, file_shapes, model, inputs, rtol, atol
        )
        if error:
            shapes = ", ".join("x".join(map(str, t.shape)) for t in inputs)
            return LoaderCheck(batches, samples, None, None, i + 1, False,
                               f"batch {i + 1} ({shapes}): {error}")  # fmt: skip
        if worst_batch is None or abs_diff > worst_abs:
            worst_abs, worst_batch = abs_diff, i + 1
        worst_rel, ok = max(worst_rel, rel_diff), ok and passed
    if not batches:
        raise ValueError("loader yielded no batches; is the dataset empty?")
    return LoaderCheck(batches, samples, worst_abs, worst_rel, worst_batch, ok)


def verify_onnx(
    path: str | os.PathLike,
    model: nn.Module,
    example_inputs: torch.Tensor | Sequence[torch.Tensor] | None = None,
    *,
    batch_sizes: Sequence[int] = (1, 3, 8),
    sizes: Mapping[str, Sequence[int]] | None = None,
    loader: Iterable | None = None,
    batch_fn: Callable | None = None,
    rtol: float = 1e-4,
    atol: float = 1e-5,
) -> VerificationReport:
    """Check an exported file with the ONNX checker and against eager PyTorch at several shapes.

    From ``example_inputs``, the file is tried at every batch size, then at several sizes of
    each other dynamic axis of the file (those ``export_onnx``'s ``dynamic_shapes`` named),
    one axis at a time, then once with every axis at its largest size. The example's values
    are repeated (or cut) along an axis to reach a size. With ``loader``, every batch of it is
    run too, and the worst difference is reported: synthetic sizes cannot show a model whose
    output depends on the values, such as the amount of padding. Each input goes through ONNX
    Runtime and through ``model`` in eval mode, and an element passes when
    ``|ort - eager| <= atol + rtol * |eager|``.

    Args:
        path: the ``.onnx`` file (from :func:`export_onnx`).
        model: the PyTorch model it was exported from (on the CPU); its mode is restored.
        example_inputs: a tensor or tuple of tensors, as given to :func:`export_onnx`; may be
            None when ``loader`` is given.
        batch_sizes: batch sizes to try with ``example_inputs``; include ones other than the
            example's.
        sizes: sizes to try for the file's other dynamic axes, by the axis's name, e.g.
            ``{"time": (8, 40, 160)}``; an axis not named here is tried at half, once and
            twice the example's size.
        loader: an iterable of real batches (a validation ``DataLoader``); each yields inputs,
            ``(inputs,)`` or ``(inputs, targets)`` (targets are ignored), or what
            ``batch_fn`` reads.
        batch_fn: ``batch_fn(batch) -> (inputs, targets)`` for the loader's batches, as in
            ``fit`` (targets may be None); ``inputs`` a tensor or a tuple in ``forward``'s
            order.
        rtol: the relative tolerance, a share of ``|eager|``.
        atol: the absolute tolerance, added to the relative one.

    Returns:
        A :class:`VerificationReport` (``print`` it, or ``.to_dict()``); ``report.passed`` is True.

    Raises:
        TypeError: wrong argument types, or neither ``example_inputs`` nor ``loader``.
        ValueError: ``batch_sizes`` is empty or holds a non-positive size, ``sizes`` names an
            axis the file does not have, ``loader`` is empty, or the model is not on the CPU.
        FileNotFoundError: ``path`` does not exist.
        VerificationError: the checker failed or some shape or batch disagrees;
            ``err.report`` holds it.

    Example:
        >>> model = torch.nn.Linear(4, 2)
        >>> path = export_onnx(model, torch.randn(2, 4), "/tmp/linear.onnx")
        >>> verify_onnx(path, model, torch.randn(2, 4)).passed
        True
        >>> loader = [torch.randn(5, 4), torch.randn(3, 4)]
        >>> verify_onnx(path, model, loader=loader).loader.batches
        2
    """
    onnx = need("onnx", "onnx", "companion.verify_onnx")
    need("onnxruntime", "onnx", "companion.verify_onnx")

    check_exportable(model)
    if example_inputs is None and loader is None:
        raise TypeError(
            "verify_onnx needs example_inputs (tried at several sizes), loader=... (every "
            "batch of real data), or both; it got neither."
        )
    if example_inputs is None and sizes is not None:
        raise TypeError("sizes=... resizes example_inputs; pass example_inputs too.")
    inputs = as_inputs(example_inputs) if example_inputs is not None else None
    batches = list(batch_sizes)
    if not batches or not all(isinstance(b, int) and b > 0 for b in batches):
        raise ValueError(f"batch_sizes must be positive ints, got {batch_sizes!r}.")
    if sizes is not None and not isinstance(sizes, Mapping):
        raise TypeError(
            f"sizes must be a dict {{axis name: sizes}}, e.g. {{'time': (8, 40, 160)}}, got "
            f"{type(sizes).__name__}."
        )
    if loader is not None:
        check_loader(loader, "loader")
    check_batch_fn(batch_fn)
    if not os.path.exists(path):
        raise FileNotFoundError(
            f"path: no ONNX file at {os.fspath(path)!r}; run export_onnx first."
        )
    try:
        onnx.checker.check_model(os.fspath(path), full_check=True)
        checker = "passed"
    except Exception as exc:
        checker = first_line(exc)
    try:
        session, load_error = ort_session(path), None
        names = [i.name for i in session.get_inputs()]
        file_shapes = [list(i.shape) for i in session.get_inputs()]
    except Exception as exc:
        session, names, file_shapes = None, [], []
        load_error = f"ONNX Runtime cannot load the file ({first_line(exc)})"
    checks = []
    if inputs is not None:
        batch_name, symbols, plan = _size_plan(inputs, file_shapes, batches, sizes)
        for batch_size, axis_sizes in plan:
            batch = at_batch(inputs, batch_size)
            for name, size in axis_sizes.items():
                for i, axis in symbols[name]:
                    batch = (*batch[:i], _resized(batch[i], axis, size), *batch[i + 1 :])
            shapes = [tuple(t.shape) for t in batch]
            batch_size = batch[0].shape[0] if batch[0].dim() else 1
            row = {batch_name: batch_size, **axis_sizes}
            if load_error:
                checks.append(ShapeCheck(batch_size, shapes, None, None, False, load_error, row))
                continue
            result = _run_check(session, names, file_shapes, model, batch, rtol, atol)
            checks.append(ShapeCheck(batch_size, shapes, *result, sizes=row))
    loader_check = None
    if loader is not None:
        if load_error:
            loader_check = LoaderCheck(0, 0, None, None, None, False, load_error)
        else:
            loader_check = _check_loader(
                session, names, file_shapes, model, loader, batch_fn, rtol, atol
            )
    report = VerificationReport(os.fspath(path), checker, checks, rtol, atol, loader_check)
    if not report.passed:
        raise VerificationError(
            f"ONNX Runtime and eager PyTorch disagree (or the checker failed):\n{report}\n"
            "Was the file exported from this model with its current weights? Differences on "
            "some real batches only point at a choice the export fixed (legacy=True keeps one "
            "branch of an if on a tensor).",
            report,
        )
    return report
