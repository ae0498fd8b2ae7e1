"""Export a model to ONNX and check that ONNX Runtime computes what PyTorch computes.

Two calls: :func:`export_onnx` writes the file with the ``torch.export``-based exporter (batch
dimension dynamic, model in eval mode), :func:`verify_onnx` runs the ONNX checker and compares ONNX
Runtime with eager PyTorch at several batch sizes. ``onnx`` and ``onnxruntime`` are imported inside
the functions that need them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import html
import io
import logging
import math
import os
import re
import sys
import tempfile
import traceback
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from companion._extras import EXTRAS, need

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
    """Collect what torch.export prints to stderr (partial graphs on failure) into ``buffer``."""
    # This torch warning fires before we locate the user's line ourselves; it only misleads.
    shapes_log = logging.getLogger("torch.fx.experimental.symbolic_shapes")
    drop = _DropMessage("Unable to find user code corresponding to")
    shapes_log.addFilter(drop)
    try:
        with contextlib.redirect_stderr(buffer):
            yield
    finally:
        shapes_log.removeFilter(drop)


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
        "if the message mentions constraints or specialization, the model fixes the batch size "
        "(e.g. x.view(4, -1)): use x.flatten(1) / x.view(x.shape[0], -1), or dynamic_batch=False;",
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
    input_names: Sequence[str] | None = None,
    output_names: Sequence[str] | None = None,
    opset: int | None = None,
    legacy: bool = False,
) -> Path:
    """Export ``model`` to an ONNX file with the ``torch.export``-based exporter.

    The model is put in eval mode for the export and every submodule gets its previous mode
    back afterwards. The weights are stored inside the file (models over 2 GB get a ``.data``
    file next to it). The first dimension of every input (and output) is dynamic unless
    ``dynamic_batch=False``; an example batch of 1 is fine.

    Args:
        model: the ``nn.Module`` to export; its tensors must be on the CPU.
        example_inputs: a tensor or a tuple of tensors the model accepts.
        path: where to write the ``.onnx`` file; parent folders are created.
        dynamic_batch: make the batch dimension symbolic (named ``"batch"``).
        input_names: names of the graph inputs; default ``"inputs"`` (``"inputs_0"``, ... if
            several).
        output_names: names of the graph outputs; default ``"outputs"`` (``"outputs_0"``, ...).
        opset: ONNX opset version; None uses the exporter's default.
        legacy: use the deprecated TorchScript exporter with ``dynamic_axes`` instead (kept for
            comparison: it traces one run and silently keeps only the branch that run took).

    Returns:
        The path of the written file.

    Raises:
        TypeError: ``model`` or ``example_inputs`` has the wrong type.
        ValueError: the model is not on the CPU, the inputs do not share a batch dimension,
            the names do not match, or the model fails on ``example_inputs``.
        OSError: ``path`` is a folder or cannot be written (checked before exporting).
        ExportError: the exporter failed (for control flow on tensor values the message points
            at the line and names ``torch.where`` and ``torch.cond``), or the model's code fixed
            the batch size although ``dynamic_batch=True``.

    Example:
        >>> model = torch.nn.Linear(4, 2)
        >>> export_onnx(model, torch.randn(1, 4), "/tmp/linear.onnx").name
        'linear.onnx'
    """
    for package in EXTRAS["onnx"]:  # torch.onnx's exporter imports onnxscript and onnx lazily
        need(package, "onnx", "companion.export_onnx")
    check_exportable(model)
    inputs = as_inputs(example_inputs)
    if opset is not None and (not isinstance(opset, int) or opset < 7):
        raise ValueError(f"opset must be an int >= 7 or None, got {opset!r}.")
    path = _check_destination(path)
    if dynamic_batch:
        _check_batch(inputs)
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
                _export_legacy(model, inputs, path, in_names, out_names, dynamic_batch, opset)
            except Exception as exc:
                raise _export_error(model, exc, "") from exc
            return path
        batch = torch.export.Dim("batch", min=1)
        dynamic_shapes = tuple({0: batch} for _ in inputs) if dynamic_batch else None
        buffer = io.StringIO()
        try:
            with _quiet_exporter(buffer), warnings.catch_warnings():
                # Every input shares the one "batch" Dim on purpose; torch warns that it
                # cannot give the same name twice, although it is the same axis.
                warnings.filterwarnings("ignore", "# The axis name: batch will not be used, since")
                torch.onnx.export(
                    model,
                    inputs,
                    path,
                    dynamo=True,
                    dynamic_shapes=dynamic_shapes,
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
    if dynamic_batch:
        _check_dynamic(model, path, inputs[0].shape[0])
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


def _check_dynamic(model: nn.Module, path: Path, batch_size: int) -> None:
    """The exporter silently fixes the batch size when the code needs it; say so instead."""
    onnx = need("onnx", "onnx", "companion.export_onnx")

    graph = onnx.load(os.fspath(path), load_external_data=False).graph
    fixed = [i.name for i in graph.input if not i.type.tensor_type.shape.dim[0].dim_param]
    if fixed:
        raise ExportError(
            f"dynamic_batch=True, but the exporter fixed the batch size of {fixed} to "
            f"{batch_size}: {type(model).__name__}'s forward uses the batch size as a constant "
            "(e.g. x.view(4, -1), torch.zeros(4, ...), a reshape built from the example's size). "
            "Write it in terms of the input instead: x.flatten(1), x.view(x.shape[0], -1), "
            f"torch.zeros(x.shape[0], ...). Or pass dynamic_batch=False if a batch of {batch_size} "
            f"is intended. The file at {os.fspath(path)!r} has that fixed batch size."
        )


def _export_legacy(model, inputs, path, in_names, out_names, dynamic_batch, opset) -> None:
    axes = {name: {0: "batch"} for name in [*in_names, *out_names]} if dynamic_batch else None
    with warnings.catch_warnings():
        # legacy=True is an explicit request for the deprecated exporter (documented above);
        # torch's notice would point at this file, and the second is torch calling its own
        # deprecated helper. Its TracerWarnings (the point of the comparison) still show.
        warnings.filterwarnings(
            "ignore", "You are using the legacy TorchScript", DeprecationWarning
        )
        warnings.filterwarnings("ignore", "The feature will be removed", DeprecationWarning)
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
    """ONNX Runtime against eager PyTorch at one batch size."""

    batch_size: int
    input_shapes: list[tuple[int, ...]]
    max_abs_diff: float | None
    max_rel_diff: float | None
    passed: bool
    error: str | None = None


@dataclasses.dataclass
class VerificationReport:
    """What :func:`verify_onnx` found: the checker result and one :class:`ShapeCheck` per shape."""

    path: str
    checker: str
    checks: list[ShapeCheck]
    rtol: float
    atol: float

    @property
    def passed(self) -> bool:
        return self.checker == "passed" and all(c.passed for c in self.checks)

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "passed": self.passed}

    def _rows(self) -> list[list[str]]:
        rows = []
        for c in self.checks:
            shapes = ", ".join("x".join(map(str, s)) for s in c.input_shapes)
            abs_diff = "-" if c.max_abs_diff is None else f"{c.max_abs_diff:.2e}"
            rel_diff = "-" if c.max_rel_diff is None else f"{c.max_rel_diff:.2e}"
            verdict = "pass" if c.passed else f"FAIL {c.error or ''}".strip()
            rows.append([str(c.batch_size), shapes, abs_diff, rel_diff, verdict])
        return rows

    def __str__(self) -> str:
        head = ["batch", "input shapes", "max abs diff", "max rel diff", "result"]
        rows = [head, *self._rows()]
        widths = [max(len(r[i]) for r in rows) for i in range(len(head) - 1)]
        lines = [
            f"ONNX verification of {self.path}: {'PASSED' if self.passed else 'FAILED'}",
            f"checker (full_check): {self.checker}; tolerance |ort - eager| <= "
            f"{self.atol:g} + {self.rtol:g} * |eager|",
        ]
        for r in rows:
            lines.append("  ".join(cell.ljust(w) for cell, w in zip(r, widths)) + "  " + r[-1])
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        head = "".join(
            f"<th>{h}</th>" for h in ["batch", "input shapes", "max abs diff", "max rel diff"]
        )
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>"
            for row in self._rows()
        )
        verdict = "PASSED" if self.passed else "FAILED"
        return (
            f"<p>ONNX verification of <code>{html.escape(self.path)}</code>: <b>{verdict}</b> "
            f"(checker: {html.escape(self.checker)})</p>"
            f"<table><tr>{head}<th>result</th></tr>{body}</table>"
        )


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


def verify_onnx(
    path: str | os.PathLike,
    model: nn.Module,
    example_inputs: torch.Tensor | Sequence[torch.Tensor],
    *,
    batch_sizes: Sequence[int] = (1, 3, 8),
    rtol: float = 1e-4,
    atol: float = 1e-5,
) -> VerificationReport:
    """Check an exported file with the ONNX checker and against eager PyTorch at several shapes.

    For each batch size the example rows are repeated (or cut) to that many rows, run through
    ONNX Runtime and through ``model`` in eval mode, and compared element-wise: an element passes
    when ``|ort - eager| <= atol + rtol * |eager|``.

    Args:
        path: the ``.onnx`` file (from :func:`export_onnx`).
        model: the PyTorch model it was exported from (on the CPU); its mode is restored.
        example_inputs: a tensor or tuple of tensors, as given to :func:`export_onnx`.
        batch_sizes: batch sizes to try; include ones other than the example's.
        rtol: relative tolerance.
        atol: absolute tolerance.

    Returns:
        A :class:`VerificationReport` (``print`` it, or ``.to_dict()``); ``report.passed`` is True.

    Raises:
        TypeError: wrong argument types.
        ValueError: ``batch_sizes`` is empty or holds a non-positive size, or the model is not
            on the CPU.
        FileNotFoundError: ``path`` does not exist.
        VerificationError: the checker failed or some shape disagrees; ``err.report`` holds it.

    Example:
        >>> model = torch.nn.Linear(4, 2)
        >>> path = export_onnx(model, torch.randn(2, 4), "/tmp/linear.onnx")
        >>> verify_onnx(path, model, torch.randn(2, 4)).passed
        True
    """
    onnx = need("onnx", "onnx", "companion.verify_onnx")
    need("onnxruntime", "onnx", "companion.verify_onnx")

    check_exportable(model)
    inputs = as_inputs(example_inputs)
    sizes = list(batch_sizes)
    if not sizes or not all(isinstance(b, int) and b > 0 for b in sizes):
        raise ValueError(f"batch_sizes must be positive ints, got {batch_sizes!r}.")
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
    except Exception as exc:
        load_error = f"ONNX Runtime cannot load the file ({first_line(exc)})"
    checks = []
    for batch_size in sizes:
        batch = at_batch(inputs, batch_size)
        shapes = [tuple(t.shape) for t in batch]
        if load_error:
            checks.append(ShapeCheck(batch_size, shapes, None, None, False, load_error))
            continue
        if len(names) != len(batch):
            error = f"the file has {len(names)} inputs, example_inputs has {len(batch)}"
            checks.append(ShapeCheck(batch_size, shapes, None, None, False, error))
            continue
        try:
            got = session.run(None, dict(zip(names, to_numpy(batch))))
        except Exception as exc:
            error = f"ONNX Runtime failed ({first_line(exc)}); exported with dynamic_batch=False?"
            checks.append(ShapeCheck(batch_size, shapes, None, None, False, error))
            continue
        abs_diff, rel_diff, ok, error = _compare(got, _eager(model, batch), rtol, atol)
        checks.append(ShapeCheck(batch_size, shapes, abs_diff, rel_diff, ok, error))
    report = VerificationReport(os.fspath(path), checker, checks, rtol, atol)
    if not report.passed:
        raise VerificationError(
            f"ONNX Runtime and eager PyTorch disagree (or the checker failed):\n{report}\n"
            "Was the file exported from this model with its current weights?",
            report,
        )
    return report
