"""Eager PyTorch vs ONNX Runtime vs torch.compile on this CPU, for the chapter's claims.

Prints companion.benchmark_inference's table for the course's CNN (1x28x28), an MLP and
torchvision's resnet18 (random weights, 3x224x224); int8 quantization per scheme (u8s8-reduced,
u8u8, full-range u8s8: size, speed and accuracy against the float file); an experiment on
ONNX Runtime session settings, each run alone in a fresh process and interleaved with eager (why
an untuned session can lose to eager); the export time of a course model; and the targets.
Ratios in the tables are measured side by side in one process, interleaved, as medians.

    python benchmarks/inference.py            # full run (about 6 minutes on 2 cores)
    python benchmarks/inference.py --quick    # smoke run: 5 repeats, no compile, no experiment
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from companion.export import export_onnx, ort_session, verify_onnx  # noqa: E402
from companion.inference import _cpu_int8, benchmark_inference, quantize_onnx  # noqa: E402

CNN, MLP, RESNET = "course CNN (1x28x28)", "course MLP (784-256-128-10)", "resnet18 (3x224x224)"
MLP_FLOPS_PER_SAMPLE = 2 * (784 * 256 + 256 * 128 + 128 * 10)


class CourseCNN(nn.Module):
    """The course's small CNN for 1x28x28 digits/shapes images."""

    def __init__(self, num_classes: int = 10) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        )  # fmt: skip
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(32 * 7 * 7, 64), nn.ReLU(),
                                  nn.Linear(64, num_classes))  # fmt: skip

    def forward(self, x):  # (B, 1, 28, 28) -> (B, num_classes)
        return self.head(self.features(x))


def course_mlp(num_classes: int = 10) -> nn.Module:
    """The course's MLP for flattened 1x28x28 images."""
    return nn.Sequential(
        nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
        nn.Linear(128, num_classes),
    )  # fmt: skip


def build(name: str) -> tuple[nn.Module, torch.Tensor]:
    """A model in eval mode (seeded random weights) and a one-row example input."""
    torch.manual_seed(0)
    if name == CNN:
        return CourseCNN().eval(), torch.randn(1, 1, 28, 28)
    if name == MLP:
        return course_mlp().eval(), torch.randn(1, 1, 28, 28)
    import torchvision

    return torchvision.models.resnet18(weights=None).eval(), torch.randn(1, 3, 224, 224)


# --------------------------------------------------------------------------- session experiment


def _session(kind: str, path: str):
    """untuned: ORT defaults; tuned: companion's settings; nospin / spinning: tuned, but with
    spinning off altogether / left spinning between runs."""
    import onnxruntime as ort

    if kind == "untuned":
        return ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    if kind == "tuned":
        return ort_session(path)
    options = ort.SessionOptions()
    options.intra_op_num_threads = torch.get_num_threads()
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.add_session_config_entry("session.intra_op.allow_spinning", str(int(kind != "nospin")))
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def worker(spec: dict) -> dict[str, float]:
    """In a fresh process: time the given backends, interleaved; medians in seconds."""
    model, example = build(spec["model"])
    inputs = example.repeat(spec["batch"], *([1] * (example.dim() - 1)))
    feed = {"inputs": inputs.numpy()}
    runners = {}
    for backend in spec["backends"]:
        if backend == "eager":
            runners[backend] = lambda: model(inputs)
        else:
            kind, path = backend.split(":", 1)
            session = _session(kind, path)
            runners[backend] = lambda s=session: s.run(None, feed)
    samples = {key: [] for key in runners}
    with torch.inference_mode():
        numbers = {}
        for key, fn in runners.items():
            for _ in range(3):
                fn()
            start = time.perf_counter()
            fn()
            numbers[key] = max(1, round(0.2 / (time.perf_counter() - start)))
        for _ in range(spec["repeats"]):
            for key, fn in runners.items():
                start = time.perf_counter()
                for _ in range(numbers[key]):
                    fn()
                samples[key].append((time.perf_counter() - start) / numbers[key])
    return {key: statistics.median(values) for key, values in samples.items()}


def _in_fresh_process(spec: dict) -> dict[str, float]:
    result = subprocess.run(
        [sys.executable, __file__, "--worker", json.dumps(spec)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def session_experiment(name: str, batch: int, folder: Path, repeats: int) -> list[str]:
    """ONNX Runtime settings alone (own process) and interleaved with eager; printable lines."""
    model, example = build(name)
    optimized = str(export_onnx(model, example, folder / "experiment.onnx"))
    raw = str(folder / "experiment_raw.onnx")
    torch.onnx.export(model, (example,), raw, dynamo=True, optimize=False,
                      dynamic_shapes=({0: torch.export.Dim("batch", min=1)},),
                      input_names=["inputs"], external_data=False, verbose=False)  # fmt: skip
    spec = {"model": name, "batch": batch, "repeats": repeats}
    eager = _in_fresh_process({**spec, "backends": ["eager"]})["eager"]
    lines = [f"  {'eager PyTorch, alone':52s} {eager * 1e3:8.3f} ms"]
    alone = [
        ("ORT untuned (default SessionOptions), alone", f"untuned:{optimized}"),
        ("ORT tuned (companion settings), alone", f"tuned:{optimized}"),
        ("ORT untuned, optimize=False export, alone", f"untuned:{raw}"),
        ("ORT tuned, optimize=False export, alone", f"tuned:{raw}"),
    ]
    for label, backend in alone:
        ms = _in_fresh_process({**spec, "backends": [backend]})[backend]
        lines.append(f"  {label:52s} {ms * 1e3:8.3f} ms  {eager / ms:.2f}x vs eager alone")
    together = [
        ("eager + ORT untuned, interleaved in one process", f"untuned:{optimized}"),
        ("eager + ORT tuned, interleaved in one process", f"tuned:{optimized}"),
        ("eager + ORT, spinning never stops, interleaved", f"spinning:{optimized}"),
        ("eager + ORT, spinning off altogether, interleaved", f"nospin:{optimized}"),
    ]
    for label, backend in together:
        medians = _in_fresh_process({**spec, "backends": ["eager", backend]})
        e, o = medians["eager"], medians[backend]
        lines.append(
            f"  {label:52s} {o * 1e3:8.3f} ms  {e / o:.2f}x vs eager there ({e * 1e3:.3f} ms)"
        )
    return lines


# --------------------------------------------------------------------------- main


def export_seconds(folder: Path) -> tuple[float, float]:
    """Seconds to export the course CNN: the first export in this process (which pays for
    importing the exporter), then a fresh model once more."""
    times = []
    for name in ("first.onnx", "second.onnx"):
        model, inputs = build(CNN)
        start = time.perf_counter()
        export_onnx(model, inputs, folder / name)
        times.append(time.perf_counter() - start)
    return times[0], times[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="5 repeats, no torch.compile or settings experiment, resnet18 at batch 1 only")  # fmt: skip
    parser.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    parser.add_argument("--repeats", type=int, default=None,
                        help="interleaved samples per measurement (default 15, --quick 5)")  # fmt: skip
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return 0
    repeats = args.repeats or (5 if args.quick else 15)
    use_compile = not (args.quick or args.no_compile)
    start_load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {os.cpu_count()} CPUs")
    batch_sizes = {CNN: (1, 32, 256), MLP: (1, 64), RESNET: (1,) if args.quick else (1, 32)}
    tables, notes, quantized = {}, [], {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        first_export, second_export = export_seconds(folder)
        for name, sizes in batch_sizes.items():
            model, inputs = build(name)
            path = export_onnx(model, inputs, folder / "model.onnx")
            verify_onnx(path, model, inputs, batch_sizes=(1, 3), atol=1e-5)
            table = benchmark_inference(model, path, inputs, batch_sizes=sizes,
                                        compile=use_compile, repeats=repeats)  # fmt: skip
            tables[name] = table
            lines = str(table).splitlines()
            print(f"\n== {name}")
            print("\n".join(line for line in lines if not line.startswith("note:")))
            notes += [line for line in lines if line.startswith("note:") and line not in notes]
        print("\n" + "\n".join(notes))

        cpu, _ = _cpu_int8()
        print(f"\n== int8 dynamic quantization, ONNX Runtime, per scheme (this CPU: {cpu})")
        print(
            "   random inputs, batches of 32; agreement = int8's class is float's class; speed and"
        )
        print(
            "   max |int8 - float| against the float file in ONNX Runtime, measured in one process"
        )
        for name in batch_sizes:
            model, inputs = build(name)
            path = export_onnx(model, inputs, folder / "model.onnx")
            batches = [inputs.repeat(32, 1, 1, 1) + torch.randn(32, *inputs.shape[1:])
                       for _ in range(4)]  # fmt: skip
            with torch.inference_mode():  # targets: the float model's own classes
                loader = [(x, model(x).argmax(dim=1)) for x in batches]
            for op_types in (None, ("MatMul", "Gemm")):
                what = "all supported ops" if op_types is None else "MatMul/Gemm only"
                for scheme in ("u8s8-reduced", "u8u8", "u8s8"):
                    report = quantize_onnx(path, folder / "int8.onnx", loader, op_types=op_types,
                                           scheme=scheme)  # fmt: skip
                    quantized[name, what, scheme] = report.speed_ratio
                    print(f"  {name:28s} {what:18s} {scheme:13s} size x{report.size_ratio:.2f}  "
                          f"speed {report.speed_ratio:.2f}x  max |int8 - float| "
                          f"{report.max_abs_diff:.3g}  agreement "
                          f"{report.quantized_accuracy:.3f}")  # fmt: skip

        if not args.quick:
            load = f", load average {os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else ""
            print(f"\n== ONNX Runtime settings, {RESNET} at batch 1 (medians{load})")
            print("\n".join(session_experiment(RESNET, 1, folder, min(repeats, 9))))

    def row(name, batch):
        return next(r for r in tables[name].rows if r["batch_size"] == batch)

    course = [r for name in (CNN, MLP) for r in tables[name].rows]
    slowest = min(course, key=lambda r: r["onnxruntime_speedup"])
    mlp64, res1 = row(MLP, 64), row(RESNET, 1)
    worst_diff = max(r["onnxruntime_max_abs_diff"] for t in tables.values() for r in t.rows)
    checks = [
        ("ORT never slower than eager on a course model",
         f"slowest {slowest['onnxruntime_speedup']:.2f}x (batch {slowest['batch_size']})",
         slowest["onnxruntime_speedup"] >= 1.0),
        ("ORT >= 1.2x on the MLP at batch 64", f"{mlp64['onnxruntime_speedup']:.2f}x",
         mlp64["onnxruntime_speedup"] >= 1.2),
        ("ORT >= 1.5x on resnet18 at batch 1", f"{res1['onnxruntime_speedup']:.2f}x",
         res1["onnxruntime_speedup"] >= 1.5),
        ("outputs within 1e-5 of eager", f"max {worst_diff:.1e}", worst_diff <= 1e-5),
        ("export of a course model within 5 s",
         f"{second_export:.1f} s (the first in this process {first_export:.1f} s, with imports)",
         second_export <= 5.0),
    ]  # fmt: skip
    print("\n== targets")
    for label, value, ok in checks:
        print(f"  {'met ' if ok else 'MISS'}  {label:48s} {value}")
    gflops = {
        key: 64 * MLP_FLOPS_PER_SAMPLE / (mlp64[f"{key}_ms"] * 1e-3) / 1e9
        for key in ("eager", "onnxruntime")
    }
    print(
        f"  MLP at batch 64 is one matrix-multiply chain of {64 * MLP_FLOPS_PER_SAMPLE / 1e6:.0f} "
        f"MFLOP: eager runs it at {gflops['eager']:.0f} GFLOP/s, ORT at "
        f"{gflops['onnxruntime']:.0f} GFLOP/s (float32); int8 quantization runs it "
        f"{quantized[MLP, 'MatMul/Gemm only', 'u8s8-reduced']:.2f}x faster than float ORT "
        "(scheme u8s8-reduced, quantize_onnx's default)."
    )
    if start_load >= (os.cpu_count() or 1):
        print(
            f"  WARNING: load average {start_load:.1f} at the start on {os.cpu_count()} CPUs: other "
            "processes hold cores, eager PyTorch's threads then wait for each other at every "
            "layer, and the ratios above overstate ONNX Runtime. Rerun on an idle machine."
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
