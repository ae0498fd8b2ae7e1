"""Eager PyTorch vs ONNX Runtime vs torch.compile on this CPU, for the chapter's claims.

Prints companion.benchmark_inference's table for the course's CNN (1x28x28), an MLP and
torchvision's resnet18 (random weights, 3x224x224), an experiment on ONNX Runtime session settings
(why an untuned session can lose to eager), the export time of a course model, and a check of the
chapter's targets. Every ratio is measured side by side in this process, interleaved, as medians.

    python benchmarks/inference.py            # full run (several minutes on 2 cores)
    python benchmarks/inference.py --quick    # a smoke run: fewer repeats, no torch.compile
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from companion.export import export_onnx, verify_onnx  # noqa: E402
from companion.inference import benchmark_inference  # noqa: E402


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


def _interleaved(runners: dict, repeats: int, number: int) -> dict[str, float]:
    samples = {key: [] for key in runners}
    for fn in runners.values():
        fn()
        fn()
    for _ in range(repeats):
        for key, fn in runners.items():
            start = time.perf_counter()
            for _ in range(number):
                fn()
            samples[key].append((time.perf_counter() - start) / number)
    return {key: statistics.median(values) for key, values in samples.items()}


def session_experiment(model, inputs, folder: Path, repeats: int) -> dict[str, float]:
    """resnet18 at batch 1 under several ONNX Runtime settings, against eager (speed-ups)."""
    import onnxruntime as ort

    from companion.export import _ort_session

    optimized = export_onnx(model, inputs, folder / "resnet18.onnx")
    raw = folder / "resnet18_raw.onnx"
    with torch.no_grad():
        torch.onnx.export(model.eval(), (inputs,), raw, dynamo=True, optimize=False,
                          dynamic_shapes=({0: torch.export.Dim("batch", min=1)},),
                          input_names=["inputs"], external_data=False, verbose=False)  # fmt: skip

    def spinning(path):
        options = ort.SessionOptions()
        options.intra_op_num_threads = torch.get_num_threads()
        options.add_session_config_entry("session.intra_op.allow_spinning", "1")
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    feed = {"inputs": inputs.numpy()}
    sessions = {
        "untuned session (defaults)": ort.InferenceSession(str(optimized)),
        "tuned session (companion)": _ort_session(optimized),
        "tuned, but thread spinning on": spinning(optimized),
        "tuned, un-optimized export (optimize=False)": _ort_session(raw),
        "untuned, un-optimized export": ort.InferenceSession(str(raw)),
    }
    runners = {"eager": lambda: model(inputs)}
    runners.update({k: (lambda s=s: s.run(None, feed)) for k, s in sessions.items()})
    with torch.inference_mode():
        medians = _interleaved(runners, repeats, number=3)
    return {k: medians["eager"] / v for k, v in medians.items() if k != "eager"}


def export_seconds(folder: Path) -> tuple[float, float]:
    """Seconds to export the course CNN: the first export in this process, then a second one."""
    model, inputs = CourseCNN(), torch.randn(1, 1, 28, 28)
    times = []
    for name in ("first.onnx", "second.onnx"):
        start = time.perf_counter()
        export_onnx(model, inputs, folder / name)
        times.append(time.perf_counter() - start)
    return times[0], times[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="few repeats, no torch.compile, resnet18 at batch 1 only")  # fmt: skip
    parser.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    parser.add_argument("--repeats", type=int, default=None,
                        help="interleaved samples per measurement (default 15, --quick 5)")  # fmt: skip
    args = parser.parse_args(argv)
    repeats = args.repeats or (5 if args.quick else 15)
    use_compile = not (args.quick or args.no_compile)
    torch.manual_seed(0)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {os.cpu_count()} CPUs")

    import torchvision

    resnet = torchvision.models.resnet18(weights=None).eval()
    models = [
        ("course CNN (1x28x28)", CourseCNN().eval(), torch.randn(1, 1, 28, 28), (1, 32, 256)),
        ("course MLP (784-256-128-10)", course_mlp().eval(), torch.randn(1, 1, 28, 28), (1, 64)),
        ("resnet18 (3x224x224)", resnet, torch.randn(1, 3, 224, 224),
         (1,) if args.quick else (1, 32)),
    ]  # fmt: skip
    tables, failures = {}, []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        first_export, second_export = export_seconds(folder)
        for name, model, inputs, batch_sizes in models:
            path = export_onnx(model, inputs, folder / "model.onnx")
            verify_onnx(path, model, inputs, batch_sizes=(1, 3), atol=1e-5)
            table = benchmark_inference(model, path, inputs, batch_sizes=batch_sizes,
                                        compile=use_compile, repeats=repeats)  # fmt: skip
            tables[name] = table
            print(f"\n== {name}\n{table}")
        print("\n== ONNX Runtime settings, resnet18 at batch 1 (speed-up over eager)")
        experiment = session_experiment(resnet, torch.randn(1, 3, 224, 224), folder, repeats)
        for key, speedup in experiment.items():
            print(f"  {key:45s} {speedup:.2f}x")

    def row(name, batch):
        return next(r for r in tables[name].rows if r["batch_size"] == batch)

    course = [r for n in list(tables)[:2] for r in tables[n].rows]
    slowest = min(course, key=lambda r: r["onnxruntime_speedup"])
    mlp64 = row("course MLP (784-256-128-10)", 64)["onnxruntime_speedup"]
    res1 = row("resnet18 (3x224x224)", 1)["onnxruntime_speedup"]
    worst_diff = max(r["onnxruntime_max_abs_diff"] for t in tables.values() for r in t.rows)
    checks = [
        ("ORT never slower than eager on a course model",
         f"slowest {slowest['onnxruntime_speedup']:.2f}x (batch {slowest['batch_size']})",
         slowest["onnxruntime_speedup"] >= 1.0),
        ("ORT >= 1.2x on the MLP at batch 64", f"{mlp64:.2f}x", mlp64 >= 1.2),
        ("ORT >= 1.5x on resnet18 at batch 1", f"{res1:.2f}x", res1 >= 1.5),
        ("outputs within 1e-5 of eager", f"max {worst_diff:.1e}", worst_diff <= 1e-5),
        ("export of a course model within 5 s",
         f"first {first_export:.1f} s, again {second_export:.1f} s", first_export <= 5.0),
    ]  # fmt: skip
    print("\n== targets")
    for label, value, ok in checks:
        print(f"  {'met ' if ok else 'MISS'}  {label:48s} {value}")
        if not ok:
            failures.append(label)
    if hasattr(os, "getloadavg"):
        print(f"\nload average now: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    if failures:
        print("missed: " + "; ".join(failures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
