# Corpus: other correct styles: diagnose_export on a deep copy of the model, the file run with and
# without optimizations and compared in NumPy; a branch blended with a 0/1 mask, accuracy summed
# with NumPy and timed with timeit.
# %% ch08_diagnose_export points=4 feedback=passed
import copy


def diagnose_export(model, path, batches, atol=1e-4):
    """Behaviour only: a copy of the model in eval mode, and the file run two ways."""
    reference = copy.deepcopy(model).eval()  # the caller's model is never touched
    strict_options = ort.SessionOptions()
    strict_options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    strict = ort.InferenceSession(str(path), sess_options=strict_options, providers=["CPUExecutionProvider"])
    usual = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (inp,), outs = strict.get_inputs(), strict.get_outputs()
    report = []
    if inp.name != "images" or [o.name for o in outs] != ["logits"]:
        report.append("names")
    rows = np.concatenate([b.numpy() for b in batches])
    if isinstance(inp.shape[0], int):
        report.append("fixed_batch")
        n = inp.shape[0]
        chunks = [rows[i:i + n] for i in range(0, len(rows) // n * n, n)]
    else:
        chunks = [rows]
    dropping = stale = False
    for chunk in chunks:
        with torch.no_grad():
            want = reference(torch.from_numpy(chunk)).numpy()
        as_written = strict.run(None, {inp.name: chunk})[0]
        inference = usual.run(None, {inp.name: chunk})[0]
        dropping |= not np.allclose(as_written, inference, rtol=0, atol=atol)
        stale |= not np.allclose(inference, want, rtol=0, atol=atol)
    report += ["training_mode"] * dropping + ["stale_weights"] * stale
    return set(report)
# %% ch08_exportable_router points=3 feedback=passed
class ExportableRouter(Router):
    def forward(self, x):
        h = self.body(x)
        use_high = (h.mean() > 0).to(h.dtype)  # 1.0 or 0.0, decided for the whole batch
        return use_high * self.high(h) + (1 - use_high) * self.low(h)
# %% ch08_quantize_and_report points=3 feedback=passed
import timeit

from onnxruntime.quantization import QuantType, quantize_dynamic


def quantize_and_report(onnx_path, out_path, loader):
    quantize_dynamic(onnx_path, out_path, weight_type=QuantType.QInt8,
                     op_types_to_quantize=["MatMul", "Gemm"])
    sessions = [ort.InferenceSession(str(p)) for p in (onnx_path, out_path)]
    name = sessions[0].get_inputs()[0].name
    hits = np.zeros(2)
    count = 0
    batches = list(loader)
    for x, y in batches:
        for i, s in enumerate(sessions):
            hits[i] += np.sum(np.argmax(s.run(None, {name: x.numpy()})[0], axis=1) == y.numpy())
        count += y.shape[0]
    x0 = batches[0][0].numpy()
    times = [min(timeit.repeat(lambda: s.run(None, {name: x0}), number=10, repeat=3)) for s in sessions]
    sizes = [Path(onnx_path).stat().st_size, Path(out_path).stat().st_size]
    acc = hits / count
    return {
        "size_bytes": int(sizes[0]),
        "quantized_size_bytes": int(sizes[1]),
        "size_ratio": sizes[1] / sizes[0],
        "accuracy": float(acc[0]),
        "quantized_accuracy": float(acc[1]),
        "accuracy_change": float(acc[1] - acc[0]),
        "speed_ratio": times[0] / times[1],
    }
