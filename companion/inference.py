"""Faster inference, measured: int8 quantization with ONNX Runtime and a side-by-side benchmark.

:func:`quantize_onnx` applies ONNX Runtime's dynamic int8 quantization (PyTorch's own
``torch.ao.quantization`` is being retired) and reports size, and with a loader accuracy and speed.
:func:`benchmark_inference` times eager PyTorch, ONNX Runtime and ``torch.compile`` in one process,
interleaved, and reports medians with ratios against eager.
"""

from __future__ import annotations

import dataclasses
import html
import math
import os
import platform
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from companion._extras import need
from companion.export import (
    as_inputs,
    at_batch,
    check_exportable,
    eval_mode,
    first_line,
    flatten_outputs,
    ort_session,
    to_numpy,
)

__all__ = ["InferenceBenchmark", "QuantizationReport", "benchmark_inference", "quantize_onnx"]

_ORT_NOTE = (
    "ONNX Runtime {version}: CPUExecutionProvider, intra_op_num_threads={threads} "
    "(= torch.get_num_threads()), sequential execution, ORT_ENABLE_ALL graph optimizations, "
    "threads spin only while a run lasts (force_spinning_stop: idle spinning would steal "
    "cores from PyTorch); "
    "export_onnx files are exported with optimize=True; inputs are converted to NumPy once, "
    "outside the timed loop."
)


def _fmt(value: float | None, spec: str, suffix: str = "") -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value:{spec}}{suffix}"


def text_table(head: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in [head, *rows])


def html_table(head: list[str], rows: list[list[str]]) -> str:
    cells = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows
    )
    return f"<table><tr>{cells}</tr>{body}</table>"


# --------------------------------------------------------------------------- quantization


# Dynamic quantization feeds uint8 activations (0..255) to the integer kernels. On x86 CPUs
# without VNNI (AVX2 alone, AVX-512 without VNNI: e.g. AMD EPYC before Zen 4, Intel before Cascade
# Lake), ONNX Runtime's u8s8 kernels use VPMADDUBSW, which adds two uint8 x int8 products into a
# saturating int16: with full-range int8 weights (|w| <= 127) a pair reaches 2 * 255 * 127 = 64770,
# clamped to 32767. With weights in [-64, 64] a pair stays within 2 * 255 * 64 = 32640, and u8u8
# kernels widen to 16 bits before multiplying: neither can saturate on any CPU. VNNI (VPDPBUSD)
# and ARM kernels accumulate in int32, exact with every scheme.
_SCHEMES = {  # scheme: (weights signed, reduce_range, in one line)
    "u8s8-reduced": (True, True, "int8 weights in 7 bits, no saturation on any CPU"),
    "u8u8": (False, False, "uint8 weights, no saturation on any CPU"),
    "u8s8": (True, False, "full-range int8 weights, saturates on x86 without VNNI"),
}
_X86 = ("x86_64", "amd64", "i386", "i686", "x86")


def _cpu_flags() -> set[str] | None:
    """This x86 CPU's feature flags, lower case, or None where they cannot be read."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as file:
            for line in file:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].lower().split())
    except OSError:
        pass
    try:  # macOS
        out = subprocess.run(["sysctl", "-n", "machdep.cpu.features", "machdep.cpu.leaf7_features"],
                             capture_output=True, text=True, timeout=5, check=False).stdout  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    flags = {f.lower().replace("avx512vnni", "avx512_vnni").replace("avxvnni", "avx_vnni")
             for f in out.split()}  # fmt: skip
    return flags or None


def _cpu_int8() -> tuple[str, bool | None]:
    """What ONNX Runtime's u8s8 kernels do on this CPU: (description, full-range int8 exact?).

    The second item is True where full-range int8 weights are exact (x86 with AVX-512 VNNI or
    AVX-VNNI, and ARM), False on x86 without VNNI (they can saturate), None when unknown.
    """
    machine = platform.machine().lower()
    if machine not in _X86:
        return f"{machine or 'unknown'}, int32 sums", True
    flags = _cpu_flags()
    if flags is None:
        return "x86, features unknown (VNNI or not)", None
    vnni = sorted(flags & {"avx512_vnni", "avx_vnni"})
    if vnni:
        return f"x86 with {' and '.join(vnni)}, int32 sums", True
    best = next((f for f in ("avx512bw", "avx2", "sse4_1") if f in flags), "no AVX2")
    return f"x86 with {best}, no VNNI, int16 sums in u8s8 kernels", False


@dataclasses.dataclass
class QuantizationReport:
    """What :func:`quantize_onnx` did. Accuracy and speed fields are None without a loader.

    Attributes:
        path: the float ONNX file that was quantized.
        out_path: the int8 file written.
        size_bytes: the float file's size on disk, in bytes.
        quantized_size_bytes: the int8 file's size on disk, in bytes.
        size_ratio: quantized size / original size (about 0.25 for a model of weights).
        accuracy: the float file's accuracy over the loader (outputs ``(N, classes)``,
            targets ``(N,)``), or None.
        quantized_accuracy: the int8 file's accuracy over the same samples, or None.
        accuracy_change: int8 accuracy minus float accuracy (negative: int8 lost some), or
            None.
        speed_ratio: original time / quantized time on the loader's first batch (above 1
            means int8 is faster), or None.
        max_abs_diff: the largest ``|int8 - float|`` over every output element of the
            loader, or None.
        num_samples: how many samples the loader gave (0 without a loader).
        scheme: the int8 format used (see :func:`quantize_onnx`).
        cpu: what this CPU's int8 kernels are (x86 with or without VNNI, or another
            architecture).
        notes: sentences on what was skipped or how something was measured.
    """

    path: str
    out_path: str
    size_bytes: int
    quantized_size_bytes: int
    size_ratio: float
    accuracy: float | None = None
    quantized_accuracy: float | None = None
    accuracy_change: float | None = None
    speed_ratio: float | None = None
    max_abs_diff: float | None = None
    num_samples: int = 0
    scheme: str = "u8s8-reduced"
    cpu: str = ""
    notes: list[str] = dataclasses.field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def _rows(self) -> list[list[str]]:
        pct = 100 * self.accuracy_change if self.accuracy_change is not None else None
        return [
            ["size", f"{self.size_bytes / 1e6:.2f} MB -> {self.quantized_size_bytes / 1e6:.2f} MB",
             f"x{self.size_ratio:.2f}"],
            ["accuracy", f"{_fmt(self.accuracy, '.4f')} -> {_fmt(self.quantized_accuracy, '.4f')}",
             _fmt(pct, "+.2f", " points")],
            ["speed (float time / int8 time)", "", _fmt(self.speed_ratio, ".2f", "x")],
            ["max |int8 - float| output", "", _fmt(self.max_abs_diff, ".3g")],
        ]  # fmt: skip

    def __str__(self) -> str:
        lines = [f"int8 dynamic quantization: {self.path} -> {self.out_path}"]
        lines.append(f"  scheme {self.scheme} ({_SCHEMES[self.scheme][2]}); this CPU: {self.cpu}")
        lines += [f"  {a:32s} {b:28s} {c}".rstrip() for a, b, c in self._rows()]
        if self.num_samples:
            lines.append(f"  measured on {self.num_samples} samples")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        notes = "".join(f"<li>{html.escape(n)}</li>" for n in self.notes)
        return (
            f"<p>int8 dynamic quantization of <code>{html.escape(self.path)}</code>, scheme "
            f"<code>{self.scheme}</code> ({html.escape(_SCHEMES[self.scheme][2])}); this CPU: "
            f"{html.escape(self.cpu)}</p>"
            + html_table(["", "float -> int8", "change"], self._rows())
            + (f"<ul>{notes}</ul>" if notes else "")
        )


def _preprocess(path: Path, folder: str, notes: list[str]) -> Path:
    quant_pre_process = need(
        "onnxruntime.quantization.shape_inference", "onnx", "companion.quantize_onnx"
    ).quant_pre_process

    target = Path(folder) / "preprocessed.onnx"
    try:
        quant_pre_process(os.fspath(path), os.fspath(target))
        return target
    except Exception as exc:
        notes.append(f"pre-processing skipped ({type(exc).__name__}: {exc}); quantized as is.")
        return path


def _loader_metrics(path: Path, out_path: Path, loader: Iterable, report: QuantizationReport):
    float_session, int8_session = ort_session(path), ort_session(out_path)
    name = float_session.get_inputs()[0].name
    correct = {"float": 0, "int8": 0}
    classified = True
    max_diff = 0.0
    first_feed = None
    for step, batch in enumerate(loader):
        if not isinstance(batch, (tuple, list)) or len(batch) != 2:
            raise ValueError(
                f"loader must yield (inputs, targets) pairs, got {type(batch).__name__} at "
                f"batch {step}."
            )
        inputs, targets = batch
        feed = {name: to_numpy([torch.as_tensor(inputs)])[0]}
        if first_feed is None:
            first_feed = feed
        outputs = {
            "float": float_session.run(None, feed)[0],
            "int8": int8_session.run(None, feed)[0],
        }
        max_diff = max(max_diff, float(np.abs(outputs["int8"] - outputs["float"]).max()))
        targets = torch.as_tensor(targets)
        if classified and outputs["float"].ndim == 2 and targets.dim() == 1:
            for key, values in outputs.items():
                correct[key] += int((torch.from_numpy(values.argmax(axis=1)) == targets).sum())
        else:
            classified = False
        report.num_samples += len(targets)
    if first_feed is None:
        raise ValueError("loader yielded no batches; pass a loader with at least one batch.")
    report.max_abs_diff = max_diff
    medians = _measure(
        {
            "float": lambda: float_session.run(None, first_feed),
            "int8": lambda: int8_session.run(None, first_feed),
        },
        repeats=9,
        warmup=2,
        min_sample_s=0.05,
    )
    report.speed_ratio = medians["float"] / medians["int8"]
    batch_size = len(next(iter(first_feed.values())))
    report.notes.append(
        f"speed: median of 9 interleaved samples on the loader's first batch ({batch_size} rows), "
        "both files in ONNX Runtime with the same session settings."
    )
    if classified:
        report.accuracy = correct["float"] / report.num_samples
        report.quantized_accuracy = correct["int8"] / report.num_samples
        report.accuracy_change = report.quantized_accuracy - report.accuracy
    else:
        report.notes.append(
            "accuracy not computed: outputs are not (N, classes) with (N,) targets."
        )


def quantize_onnx(
    path: str | os.PathLike,
    out_path: str | os.PathLike,
    loader: Iterable | None = None,
    *,
    op_types: Sequence[str] | None = None,
    per_channel: bool = False,
    scheme: str = "auto",
) -> QuantizationReport:
    """Quantize an ONNX file's weights to int8 with ONNX Runtime's dynamic quantization.

    Weights are stored as 8-bit integers; activations are quantized on the fly at run time, so no
    calibration data is needed. The file is first pre-processed (shape inference and graph
    clean-up) as ONNX Runtime recommends. Linear layers (``MatMul``/``Gemm``) usually get faster;
    convolutions become ``ConvInteger``, which ONNX Runtime's CPU kernels often run slower than
    float convolutions: pass ``op_types=("MatMul", "Gemm")`` when speed matters more than size.

    Args:
        path: the float ``.onnx`` file.
        out_path: where to write the quantized file (parent folders are created).
        loader: optional iterable of ``(inputs, targets)`` batches; with it the report has the
            accuracy of both files, the change, the speed ratio and the largest output difference.
        op_types: ONNX operator types to quantize; None quantizes every supported type.
        per_channel: one scale per output channel instead of per tensor (often more accurate).
        scheme: the integer format, named activations-then-weights as ONNX Runtime's docs do.
            ``"u8s8-reduced"`` (what ``"auto"`` picks): int8 weights in 7 bits
            (``reduce_range=True``). ``"u8u8"``: uint8 weights, full 8 bits, slower integer
            kernels on x86. ``"u8s8"``: full-range int8 weights, ONNX Runtime's default, one bit
            more precise, but on x86 CPUs without VNNI (AVX2 only, e.g. many AMD EPYC) ONNX
            Runtime's kernels add two products in a saturating int16 and the outputs can be
            far off. The first two are exact on every CPU, so the file keeps its accuracy
            wherever it runs, not only on the CPU that wrote it; the report says what this
            CPU does (``report.cpu``). Pass ``"u8s8"`` only for files that run on CPUs with
            VNNI (AVX-512 VNNI or AVX-VNNI) or on ARM.

    Returns:
        A :class:`QuantizationReport` (``size_ratio`` below 1 means smaller; ``scheme`` the
        format used).

    Raises:
        FileNotFoundError: ``path`` does not exist.
        ValueError: ``out_path`` equals ``path``, an unknown ``scheme``, or the loader yields no
            (inputs, targets).

    Example:
        >>> report = quantize_onnx("model.onnx", "model.int8.onnx", val_loader)  # doctest: +SKIP
        >>> print(report)  # doctest: +SKIP
    """
    quantization = need("onnxruntime.quantization", "onnx", "companion.quantize_onnx")
    QuantType, quantize_dynamic = quantization.QuantType, quantization.quantize_dynamic

    if scheme == "auto":
        scheme = "u8s8-reduced"
    elif not isinstance(scheme, str) or scheme not in _SCHEMES:
        raise ValueError(
            f"scheme must be 'auto' or one of {', '.join(map(repr, _SCHEMES))}, got {scheme!r}."
        )
    signed, reduce_range, _ = _SCHEMES[scheme]
    path, out_path = Path(path), Path(out_path)
    if not path.is_file():
        raise FileNotFoundError(f"path: no ONNX file at {os.fspath(path)!r}; export one first.")
    if out_path.resolve() == path.resolve():
        raise ValueError(f"out_path must differ from path ({os.fspath(path)!r}): pick a new name.")
    out_path.parent.mkdir(parents=True, exist_ok=True)
    notes: list[str] = []
    with tempfile.TemporaryDirectory() as folder:
        source = _preprocess(path, folder, notes)
        quantize_dynamic(
            os.fspath(source),
            os.fspath(out_path),
            op_types_to_quantize=list(op_types) if op_types else None,
            per_channel=per_channel,
            reduce_range=reduce_range,
            weight_type=QuantType.QInt8 if signed else QuantType.QUInt8,
        )
    size, quantized = path.stat().st_size, out_path.stat().st_size
    cpu, exact_u8s8 = _cpu_int8()
    if scheme == "u8s8" and not exact_u8s8:
        notes.append(
            "scheme 'u8s8' on an x86 CPU without VNNI: its int16 sums can saturate and the "
            "outputs drift far from the float model's; 'u8s8-reduced' (auto) or 'u8u8' cannot."
        )
    report = QuantizationReport(os.fspath(path), os.fspath(out_path), size, quantized,
                                quantized / size, scheme=scheme, cpu=cpu, notes=notes)  # fmt: skip
    if loader is not None:
        _loader_metrics(path, out_path, loader, report)
    return report


# --------------------------------------------------------------------------- benchmark


@dataclasses.dataclass
class InferenceBenchmark:
    """Latency per batch size of eager PyTorch, ONNX Runtime and ``torch.compile``.

    Each row holds ``batch_size``, ``eager_ms``, ``onnxruntime_ms``, ``onnxruntime_speedup``
    (eager time / ORT time), ``onnxruntime_max_abs_diff``, ``compile_ms``, ``compile_speedup``,
    ``compile_max_abs_diff`` and ``compile_first_call_s`` (compile time, not in ``compile_ms``).

    Attributes:
        rows: one dict per batch size, with the keys above.
        notes: sentences on what could not be measured (``torch.compile`` failing, say) and
            how the timings were taken.
    """

    rows: list[dict[str, Any]]
    notes: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"rows": [dict(r) for r in self.rows], "notes": list(self.notes)}

    def _cells(self) -> tuple[list[str], list[list[str]]]:
        head = ["batch", "eager ms", "ORT ms", "ORT x", "ORT diff", "compile ms", "compile x",
                "compile s"]  # fmt: skip
        rows = [
            [
                str(r["batch_size"]),
                _fmt(r["eager_ms"], ".3f"),
                _fmt(r["onnxruntime_ms"], ".3f"),
                _fmt(r["onnxruntime_speedup"], ".2f", "x"),
                _fmt(r["onnxruntime_max_abs_diff"], ".1e"),
                _fmt(r["compile_ms"], ".3f"),
                _fmt(r["compile_speedup"], ".2f", "x"),
                _fmt(r["compile_first_call_s"], ".1f"),
            ]
            for r in self.rows
        ]
        return head, rows

    def __str__(self) -> str:
        text = text_table(*self._cells())
        return text + "".join(f"\nnote: {n}" for n in self.notes)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        notes = "".join(f"<li>{html.escape(n)}</li>" for n in self.notes)
        return html_table(*self._cells()) + f"<ul>{notes}</ul>"

    def plot(self, ax: Any = None) -> Any:
        """Bar chart of the speed-up over eager PyTorch per batch size; returns the Axes.

        Args:
            ax: a matplotlib Axes to draw on, or None for a new figure.
        """
        plt = need("matplotlib.pyplot", "plots", "InferenceBenchmark.plot")

        if ax is None:
            _, ax = plt.subplots(figsize=(6, 3.5))
        labels = [str(r["batch_size"]) for r in self.rows]
        xs = np.arange(len(labels))
        for offset, key, label in [(-0.2, "onnxruntime_speedup", "ONNX Runtime"),
                                   (0.2, "compile_speedup", "torch.compile")]:  # fmt: skip
            values = [r[key] if r[key] is not None else 0.0 for r in self.rows]
            ax.bar(xs + offset, values, width=0.4, label=label)
        ax.axhline(1.0, color="black", linewidth=1, linestyle="--", label="eager PyTorch")
        ax.set_xticks(xs, labels)
        ax.set_xlabel("batch size")
        ax.set_ylabel("speed-up over eager (x)")
        ax.legend()
        return ax


def _time_calls(fn: Callable[[], Any], number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number


def _max_diff(outputs: Any, reference: list[torch.Tensor]) -> float:
    """Largest |output - eager| over all outputs (ORT gives a list of arrays, compile tensors)."""
    got = outputs if isinstance(outputs, list) else flatten_outputs(outputs)
    diffs = [
        float(np.abs(np.asarray(g, dtype=np.float64) - r.double().numpy()).max())
        for g, r in zip(got, reference)
    ]
    return max(diffs, default=math.nan)


def benchmark_inference(
    model: nn.Module,
    onnx_path: str | os.PathLike,
    example_inputs: torch.Tensor | Sequence[torch.Tensor],
    *,
    batch_sizes: Sequence[int] = (1, 32),
    compile: bool = True,
    repeats: int = 15,
    warmup: int = 3,
    min_sample_s: float = 0.2,
    num_threads: int | None = None,
) -> InferenceBenchmark:
    """Time eager PyTorch, ONNX Runtime and ``torch.compile`` side by side on the CPU.

    For each batch size the example rows are repeated to that size. The runs are interleaved
    (eager, ORT, compiled, eager, ...) so that load from elsewhere hits all three alike; each
    sample is a block of calls lasting at least ``min_sample_s``, so that the cost of switching
    backends (caches refilled with the other's weights, its threads winding down) stays a small
    part of it; the table reports medians. Eager runs
    in ``torch.inference_mode``. ``torch.compile``'s first call at each batch size (which
    compiles) is reported separately as ``compile_first_call_s``; if compiling fails the table
    says why in its notes instead of raising.

    Args:
        model: the PyTorch model, on the CPU (its mode is restored afterwards).
        onnx_path: the file exported from ``model`` (see ``companion.export_onnx``).
        example_inputs: a tensor or tuple of tensors the model accepts.
        batch_sizes: batch sizes to time.
        compile: also time ``torch.compile(model)`` (needs a C++ compiler on CPU).
        repeats: interleaved samples per backend and batch size (the median is reported).
        warmup: untimed calls before measuring.
        min_sample_s: the shortest time one sample may take; fast calls are repeated within it.
        num_threads: ONNX Runtime threads; default ``torch.get_num_threads()``.

    Returns:
        An :class:`InferenceBenchmark`: ``print`` it, ``.to_dict()``, ``.plot()``.

    Raises:
        TypeError: wrong argument types.
        ValueError: bad ``batch_sizes``, ``repeats`` or ``warmup``, or the model is not on the
            CPU.
        FileNotFoundError: ``onnx_path`` does not exist.

    Example:
        >>> table = benchmark_inference(model, "model.onnx", torch.randn(1, 1, 28, 28))  # doctest: +SKIP
        >>> print(table)  # doctest: +SKIP
    """
    ort = need("onnxruntime", "onnx", "companion.benchmark_inference")

    check_exportable(model)
    inputs = as_inputs(example_inputs)
    sizes = list(batch_sizes)
    if not sizes or not all(isinstance(b, int) and b > 0 for b in sizes):
        raise ValueError(f"batch_sizes must be positive ints, got {batch_sizes!r}.")
    if repeats < 1 or warmup < 0:
        raise ValueError(f"repeats must be >= 1 and warmup >= 0, got {repeats} and {warmup}.")
    if not os.path.isfile(onnx_path):
        raise FileNotFoundError(f"onnx_path: no file at {os.fspath(onnx_path)!r}; export first.")
    threads = num_threads or torch.get_num_threads()
    session = ort_session(onnx_path, num_threads=threads)
    names = [i.name for i in session.get_inputs()]
    notes = [
        _ORT_NOTE.format(version=ort.__version__, threads=threads),
        f"latency: median of {repeats} interleaved samples, each a block of calls lasting >= "
        f"{min_sample_s * 1e3:.0f} ms, after {warmup} warm-up calls; x = eager time / backend "
        f"time; eager in torch.inference_mode with {torch.get_num_threads()} threads.",
    ]
    if hasattr(os, "getloadavg"):
        load, cores = os.getloadavg()[0], os.cpu_count() or 1
        busy = (
            " The machine is busy: eager PyTorch's threads wait for each other at every layer "
            "when another process holds a core, so its times (and the ratios) are inflated; "
            "rerun on an idle machine."
            if load >= cores
            else ""
        )
        notes.append(f"CPU load average before the run: {load:.1f} on {cores} cores.{busy}")
    rows = []
    with eval_mode(model), torch.inference_mode():
        compiled, compile_error = None, None
        if compile:
            try:
                compiled = torch.compile(model)
            except Exception as exc:
                compile_error = first_line(exc)
        for batch_size in sizes:
            batch = at_batch(inputs, batch_size)
            feed = dict(zip(names, to_numpy(batch)))
            reference = [t.detach().cpu() for t in flatten_outputs(model(*batch))]
            runners: dict[str, Callable[[], Any]] = {
                "eager": lambda b=batch: model(*b),
                "onnxruntime": lambda f=feed: session.run(None, f),
            }
            row: dict[str, Any] = {"batch_size": batch_size, "compile_first_call_s": None}
            row["onnxruntime_max_abs_diff"] = _max_diff(session.run(None, feed), reference)
            row["compile_max_abs_diff"] = None
            if compiled is not None and compile_error is None:
                try:
                    start = time.perf_counter()
                    out = compiled(*batch)
                    row["compile_first_call_s"] = time.perf_counter() - start
                    row["compile_max_abs_diff"] = _max_diff(out, reference)
                    runners["compile"] = lambda b=batch: compiled(*b)
                except Exception as exc:
                    compile_error = first_line(exc)
            medians = _measure(runners, repeats, warmup, min_sample_s)
            eager_ms = medians["eager"] * 1e3
            row["eager_ms"] = eager_ms
            for key in ("onnxruntime", "compile"):
                ms = medians[key] * 1e3 if key in medians else None
                row[f"{key}_ms"] = ms
                row[f"{key}_speedup"] = eager_ms / ms if ms else None
            rows.append(row)
    if not compile:
        notes.append("torch.compile: not measured (compile=False).")
    elif compile_error:
        notes.append(
            f"torch.compile failed, so its columns are empty: {compile_error}. On CPU it needs a "
            "working C++ compiler (gcc or clang); pass compile=False to skip it."
        )
    else:
        notes.append(
            "torch.compile: default settings (inductor); compile s = the first call at that batch "
            "size, which compiles (a new batch size may recompile), excluded from compile ms."
        )
    return InferenceBenchmark(rows, notes)


def _measure(
    runners: dict[str, Callable[[], Any]], repeats: int, warmup: int, min_sample_s: float
) -> dict[str, float]:
    numbers = {}
    for key, fn in runners.items():
        for _ in range(warmup):
            fn()
        single = _time_calls(fn, 1)
        numbers[key] = max(1, math.ceil(min_sample_s / max(single, 1e-9)))
    samples: dict[str, list[float]] = {key: [] for key in runners}
    for _ in range(repeats):
        for key, fn in runners.items():
            samples[key].append(_time_calls(fn, numbers[key]))
    return {key: statistics.median(values) for key, values in samples.items()}
