# Corpus: a learner's correct answers, written from the docstrings (the base of every other file).
# %% ch08_diagnose_export points=4 feedback=passed
def diagnose_export(model, path, batches, atol=1e-4):
    problems = set()
    as_written = ort.SessionOptions()
    as_written.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    raw = ort.InferenceSession(str(path), as_written, providers=["CPUExecutionProvider"])
    optimized = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    inputs, outputs = raw.get_inputs(), raw.get_outputs()
    if [i.name for i in inputs] != ["images"] or [o.name for o in outputs] != ["logits"]:
        problems.add("names")

    def runs(x):  # whether the file takes this many rows, whatever its input declares
        try:
            raw.run(None, {inputs[0].name: x.numpy()})
        except Exception:
            return False
        return True

    rows = torch.cat(batches)
    if not (runs(rows[:1]) and runs(rows[:2])):  # the size is fixed, in the input or inside the graph
        problems.add("fixed_batch")
        batch_size = next(n for n in range(1, len(rows) + 1) if runs(rows[:n]))
        batches = [rows[i:i + batch_size] for i in range(0, len(rows) - batch_size + 1, batch_size)]
    was_training = {m: m.training for m in model.modules()}
    model.eval()
    with torch.no_grad():
        expected = [model(b).numpy() for b in batches]
    for m, training in was_training.items():
        m.training = training
    feed_name = inputs[0].name
    for b, want in zip(batches, expected):
        feed = {feed_name: b.numpy()}
        once, twice = raw.run(None, feed)[0], raw.run(None, feed)[0]
        if not np.array_equal(once, twice):
            problems.add("training_mode")
        if np.max(np.abs(optimized.run(None, feed)[0] - want)) > atol:
            problems.add("stale_weights")
    return problems
# %% ch08_exportable_router points=3 feedback=passed
class ExportableRouter(Router):
    def forward(self, x):
        h = self.body(x)
        per_row = h.mean(dim=1, keepdim=True) > 0  # (B, 1): one choice per sample
        return torch.where(per_row, self.high(h), self.low(h))
# %% ch08_choose_quantization points=3 feedback=passed
def choose_quantization(onnx_path, out_path, loader, max_accuracy_drop):
    from onnxruntime.quantization import QuantType, quantize_dynamic

    folder = tempfile.mkdtemp()
    files = {"float": str(onnx_path),
             "int8_matmul": os.path.join(folder, "matmul.onnx"),
             "int8_all": os.path.join(folder, "all.onnx")}
    quantize_dynamic(str(onnx_path), files["int8_matmul"], weight_type=QuantType.QInt8,
                     reduce_range=True, op_types_to_quantize=["MatMul", "Gemm"])
    quantize_dynamic(str(onnx_path), files["int8_all"], weight_type=QuantType.QInt8, reduce_range=True)
    sessions = {k: ort.InferenceSession(p, providers=["CPUExecutionProvider"]) for k, p in files.items()}
    input_name = sessions["float"].get_inputs()[0].name
    hits = {k: 0 for k in files}
    n = 0
    for inputs, targets in loader:
        for k, s in sessions.items():
            hits[k] += int((s.run(None, {input_name: inputs.numpy()})[0].argmax(1) == targets.numpy()).sum())
        n += len(targets)
    candidates = {}
    for k, p in files.items():
        acc = hits[k] / n
        candidates[k] = {"size_bytes": os.path.getsize(p), "accuracy": acc,
                         "accuracy_drop": hits["float"] / n - acc}
    choice = "float"
    for k in ("int8_matmul", "int8_all"):
        ok = candidates[k]["accuracy_drop"] <= max_accuracy_drop
        if ok and candidates[k]["size_bytes"] < candidates[choice]["size_bytes"]:
            choice = k
    shutil.copy(files[choice], out_path)
    return {"choice": choice, "candidates": candidates}
