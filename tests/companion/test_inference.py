"""Tests for companion/inference.py: int8 quantization and the benchmark table (not its timings)."""

import math

import numpy as np
import pytest
import torch
from torch import nn

from companion.export import export_onnx
from companion.inference import InferenceBenchmark, _cpu_int8, benchmark_inference, quantize_onnx

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
numpy_helper = onnx.numpy_helper


def _mlp() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Flatten(), nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 5)
    )


def _loader(num_batches: int = 3, batch_size: int = 16):
    generator = torch.Generator().manual_seed(1)
    return [
        (torch.randn(batch_size, 1, 8, 8, generator=generator), torch.randint(0, 5, (batch_size,)))
        for _ in range(num_batches)
    ]


@pytest.fixture(scope="module")
def mlp_export(tmp_path_factory):
    model = _mlp()
    inputs = torch.randn(2, 1, 8, 8)
    path = export_onnx(model, inputs, tmp_path_factory.mktemp("mlp") / "mlp.onnx")
    return model, inputs, path


def _run(path, inputs: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {session.get_inputs()[0].name: inputs})[0]


def test_quantize_shrinks_the_file_and_keeps_outputs_close(mlp_export, tmp_path):
    _, _, path = mlp_export
    out_path = tmp_path / "int8" / "mlp.int8.onnx"
    report = quantize_onnx(path, out_path)
    assert out_path.is_file()
    assert report.size_ratio < 0.5  # float32 weights become int8 (about a quarter)
    assert report.quantized_size_bytes == out_path.stat().st_size
    assert report.accuracy is None and report.speed_ratio is None
    ops = {node.op_type for node in onnx.load(str(out_path)).graph.node}
    assert "MatMulInteger" in ops or "DynamicQuantizeLinear" in ops
    inputs = np.random.default_rng(0).standard_normal((8, 1, 8, 8)).astype(np.float32)
    reference, quantized = _run(path, inputs), _run(out_path, inputs)
    assert quantized.shape == reference.shape
    assert np.abs(quantized - reference).max() < 0.05 * np.abs(reference).max() + 1e-3
    assert not np.array_equal(quantized, reference)  # it really is a different computation


# ---- int8 kernels, emulated in NumPy: ONNX Runtime's u8s8 kernels on x86 without VNNI (AVX2)
# multiply uint8 activations by int8 weights and add each pair of products along K into a
# saturating int16 (VPMADDUBSW), then sum the pairs in int32; with VNNI, or u8u8 kernels, every
# sum is int32. Emulating both lets a machine of either kind test the other's arithmetic.


def _matmul_integer(a, b, a_zero, b_zero, saturate: bool) -> np.ndarray:
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    k = a64.shape[-1]
    if saturate:
        if k % 2:  # the kernels pad K with zeros
            a64 = np.concatenate([a64, np.zeros((*a64.shape[:-1], 1), np.int64)], -1)
            b64 = np.concatenate([b64, np.zeros((1, *b64.shape[1:]), np.int64)], 0)
        pairs = a64[..., 0::2, None] * b64[0::2] + a64[..., 1::2, None] * b64[1::2]
        raw = np.clip(pairs, -32768, 32767).sum(-2)
    else:
        raw = a64 @ b64
    a_zero = 0 if a_zero is None else np.int64(a_zero)
    b_zero = 0 if b_zero is None else np.asarray(b_zero, np.int64)
    corrected = (raw - a_zero * b64[:k].sum(0) - b_zero * a64[..., :k].sum(-1, keepdims=True)
                 + k * a_zero * b_zero)  # fmt: skip
    return corrected.astype(np.int32)


def _emulate(path, inputs: np.ndarray, kernel: str) -> np.ndarray:
    """The quantized file's output with kernel 'avx2' (no VNNI) or 'int32' (VNNI, ARM, u8u8)."""
    from onnx.reference import ReferenceEvaluator
    from onnx.reference.op_run import OpRun

    class MatMulInteger(OpRun):
        op_domain = ""

        def _run(self, a, b, a_zero_point=None, b_zero_point=None):
            saturate = kernel == "avx2" and b.dtype == np.int8  # u8u8 kernels widen first
            return (_matmul_integer(a, b, a_zero_point, b_zero_point, saturate),)

    evaluator = ReferenceEvaluator(onnx.load(str(path)), new_ops=[MatMulInteger])
    return evaluator.run(None, {evaluator.input_names[0]: inputs})[0]


def _inputs() -> np.ndarray:
    return np.random.default_rng(0).standard_normal((8, 1, 8, 8)).astype(np.float32)


def test_the_emulated_kernel_is_what_onnx_runtime_computes_on_this_cpu(mlp_export, tmp_path):
    # the emulation stands in for the other kind of CPU only if it matches this one exactly
    _, _, path = mlp_export
    _, exact_here = _cpu_int8()
    if exact_here is None:
        pytest.skip("this CPU's int8 kernels are unknown (x86 without readable feature flags)")
    kernel = "int32" if exact_here else "avx2"
    for scheme in ("u8s8", "u8s8-reduced", "u8u8"):
        out_path = tmp_path / f"{scheme}.onnx"
        quantize_onnx(path, out_path, scheme=scheme)
        np.testing.assert_allclose(_run(out_path, _inputs()), _emulate(out_path, _inputs(), kernel),
                                   rtol=0, atol=1e-6, err_msg=f"scheme {scheme}")  # fmt: skip


@pytest.mark.parametrize("scheme", ["auto", "u8s8-reduced", "u8u8"])
def test_a_saturation_free_scheme_keeps_its_accuracy_on_cpus_with_and_without_vnni(
    mlp_export, tmp_path, scheme
):
    _, _, path = mlp_export
    out_path = tmp_path / "q.onnx"
    report = quantize_onnx(path, out_path, scheme=scheme)
    assert report.scheme == ("u8s8-reduced" if scheme == "auto" else scheme)
    reference = _run(path, _inputs())
    avx2, vnni = _emulate(out_path, _inputs(), "avx2"), _emulate(out_path, _inputs(), "int32")
    np.testing.assert_array_equal(avx2, vnni)  # not one int16 sum saturated
    assert np.abs(avx2 - reference).max() < 0.05 * np.abs(reference).max() + 1e-3
    weights = [numpy_helper.to_array(t) for t in onnx.load(str(out_path)).graph.initializer
               if t.name.endswith("_quantized")]  # fmt: skip
    assert weights and all(w.dtype in (np.int8, np.uint8) for w in weights)
    if report.scheme == "u8s8-reduced":  # 2 * 255 * 64 = 32640 fits an int16, for any input
        assert all(w.dtype == np.int8 and np.abs(w.astype(int)).max() <= 64 for w in weights)
    else:
        assert all(w.dtype == np.uint8 for w in weights)


def test_full_range_int8_saturates_without_vnni_and_says_so(mlp_export, tmp_path):
    # what the default used to be: right with VNNI, 0.06 off on an AVX2 CPU (AMD EPYC)
    _, _, path = mlp_export
    out_path = tmp_path / "q.onnx"
    report = quantize_onnx(path, out_path, scheme="u8s8")
    assert report.scheme == "u8s8" and "u8s8" in str(report)
    reference = _run(path, _inputs())
    limit = 0.05 * np.abs(reference).max() + 1e-3
    assert np.abs(_emulate(out_path, _inputs(), "int32") - reference).max() < limit
    assert np.abs(_emulate(out_path, _inputs(), "avx2") - reference).max() > limit
    if _cpu_int8()[1] is False:
        assert any("without VNNI" in note for note in report.notes)


def test_quantize_scheme_errors_and_report_fields(mlp_export, tmp_path):
    _, _, path = mlp_export
    for bad in ("int8", "U8S8", None):
        with pytest.raises(ValueError, match=r"scheme must be 'auto' or one of 'u8s8-reduced'"):
            quantize_onnx(path, tmp_path / "q.onnx", scheme=bad)
    report = quantize_onnx(path, tmp_path / "q.onnx")
    assert report.to_dict()["scheme"] == "u8s8-reduced" and report.to_dict()["cpu"] == report.cpu
    assert report.cpu == _cpu_int8()[0]
    assert "scheme u8s8-reduced" in str(report) and "this CPU: " in str(report)
    assert "u8s8-reduced" in report._repr_html_()


def test_quantize_with_a_loader_reports_accuracy_and_speed(mlp_export, tmp_path):
    _, _, path = mlp_export
    loader = _loader()
    report = quantize_onnx(path, tmp_path / "q.onnx", loader)
    assert report.num_samples == 48
    assert 0.0 <= report.accuracy <= 1.0 and 0.0 <= report.quantized_accuracy <= 1.0
    assert report.accuracy_change == pytest.approx(report.quantized_accuracy - report.accuracy)
    assert abs(report.accuracy_change) <= 0.25
    assert report.speed_ratio > 0 and math.isfinite(report.speed_ratio)
    assert 0 < report.max_abs_diff < 0.5
    text = str(report)
    assert "size" in text and "accuracy" in text and "speed" in text
    assert report.to_dict()["num_samples"] == 48
    assert "<table>" in report._repr_html_()


def test_quantize_op_types_leaves_convolutions_in_float(tmp_path):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 3))
    path = export_onnx(model, torch.randn(2, 1, 8, 8), tmp_path / "cnn.onnx")
    quantize_onnx(path, tmp_path / "all.onnx")
    quantize_onnx(path, tmp_path / "linear.onnx", op_types=("MatMul", "Gemm"))
    all_ops = {n.op_type for n in onnx.load(str(tmp_path / "all.onnx")).graph.node}
    linear_ops = {n.op_type for n in onnx.load(str(tmp_path / "linear.onnx")).graph.node}
    assert "ConvInteger" in all_ops
    assert "ConvInteger" not in linear_ops and "Conv" in linear_ops


def test_quantize_argument_errors(mlp_export, tmp_path):
    _, _, path = mlp_export
    with pytest.raises(FileNotFoundError, match="no ONNX file"):
        quantize_onnx(tmp_path / "missing.onnx", tmp_path / "q.onnx")
    with pytest.raises(ValueError, match="out_path must differ"):
        quantize_onnx(path, path)
    with pytest.raises(ValueError, match=r"\(inputs, targets\) pairs"):
        quantize_onnx(path, tmp_path / "q.onnx", [torch.randn(2, 1, 8, 8)])
    with pytest.raises(ValueError, match="no batches"):
        quantize_onnx(path, tmp_path / "q.onnx", [])


def _tiny_benchmark(model, path, inputs, **kwargs) -> InferenceBenchmark:
    settings = {"batch_sizes": (1, 3), "repeats": 2, "warmup": 1, "min_sample_s": 0.0}
    return benchmark_inference(model, path, inputs, **{**settings, **kwargs})


def test_benchmark_table_shape_without_compile(mlp_export):
    model, inputs, path = mlp_export
    model.train()
    table = _tiny_benchmark(model, path, inputs, compile=False)
    assert model.training  # mode restored
    assert [r["batch_size"] for r in table.rows] == [1, 3]
    for row in table.rows:
        assert row["eager_ms"] > 0 and row["onnxruntime_ms"] > 0
        assert row["onnxruntime_speedup"] == pytest.approx(row["eager_ms"] / row["onnxruntime_ms"])
        assert row["onnxruntime_max_abs_diff"] < 1e-5
        assert row["compile_ms"] is None and row["compile_speedup"] is None
    assert any("compile=False" in note for note in table.notes)
    assert any("intra_op_num_threads" in note for note in table.notes)
    text = str(table)
    assert text.splitlines()[0].split()[:3] == ["batch", "eager", "ms"]
    assert len([line for line in text.splitlines() if not line.startswith("note:")]) == 3
    data = table.to_dict()
    assert set(data) == {"rows", "notes"} and len(data["rows"]) == 2
    assert "<table>" in table._repr_html_()


def test_benchmark_plot_returns_axes(mlp_export):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    model, inputs, path = mlp_export
    axes = _tiny_benchmark(model, path, inputs, compile=False).plot()
    assert axes.get_xlabel() == "batch size"
    assert [t.get_text() for t in axes.get_xticklabels()] == ["1", "3"]
    matplotlib.pyplot.close(axes.figure)


def test_benchmark_reports_a_compile_failure_instead_of_raising(mlp_export, monkeypatch):
    model, inputs, path = mlp_export

    def broken_compile(*args, **kwargs):
        raise RuntimeError("no C++ compiler found")

    monkeypatch.setattr(torch, "compile", broken_compile)
    table = _tiny_benchmark(model, path, inputs, compile=True)
    assert all(r["compile_ms"] is None for r in table.rows)
    assert all(r["onnxruntime_ms"] > 0 for r in table.rows)
    assert any("torch.compile failed" in n and "no C++ compiler" in n for n in table.notes)


def test_benchmark_with_compile_times_the_first_call_separately(tmp_path):
    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    inputs = torch.randn(2, 4)
    path = export_onnx(model, inputs, tmp_path / "linear.onnx")
    table = _tiny_benchmark(model, path, inputs, batch_sizes=(2,), compile=True)
    (row,) = table.rows
    if row["compile_ms"] is None:  # no working C++ compiler here: the note must say why
        assert any("torch.compile failed" in n for n in table.notes)
        return
    assert row["compile_first_call_s"] > 0 and row["compile_ms"] > 0
    assert row["compile_max_abs_diff"] < 1e-5


def test_benchmark_argument_errors(mlp_export, tmp_path):
    model, inputs, path = mlp_export
    with pytest.raises(FileNotFoundError, match="onnx_path"):
        benchmark_inference(model, tmp_path / "missing.onnx", inputs)
    with pytest.raises(ValueError, match="batch_sizes must be positive"):
        benchmark_inference(model, path, inputs, batch_sizes=())
    with pytest.raises(ValueError, match="repeats must be >= 1"):
        benchmark_inference(model, path, inputs, repeats=0)
    with pytest.raises(TypeError, match="model must be a torch.nn.Module"):
        benchmark_inference(lambda x: x, path, inputs)
