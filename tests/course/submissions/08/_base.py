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
    batch_size = inputs[0].shape[0]  # an int when fixed, a name like 'batch' when dynamic
    if isinstance(batch_size, int):
        problems.add("fixed_batch")
        rows = torch.cat(batches)
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
        return torch.cond(h.mean() > 0, lambda h: self.high(h), lambda h: self.low(h), (h,))
# %% ch08_quantize_and_report points=3 feedback=passed
def quantize_and_report(onnx_path, out_path, loader):
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(onnx_path), str(out_path), weight_type=QuantType.QInt8)
    float_session = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    int8_session = ort.InferenceSession(str(out_path), providers=["CPUExecutionProvider"])
    input_name = float_session.get_inputs()[0].name
    n_correct_float = n_correct_int8 = n_samples = 0
    for inputs, targets in loader:
        feed = {input_name: inputs.numpy()}
        n_correct_float += (float_session.run(None, feed)[0].argmax(1) == targets.numpy()).sum()
        n_correct_int8 += (int8_session.run(None, feed)[0].argmax(1) == targets.numpy()).sum()
        n_samples += len(targets)
    first_inputs = {input_name: next(iter(loader))[0].numpy()}

    def seconds(session):
        start = time.perf_counter()
        for _ in range(30):
            session.run(None, first_inputs)
        return time.perf_counter() - start

    seconds(float_session), seconds(int8_session)  # warm up
    float_time, int8_time = seconds(float_session), seconds(int8_session)
    size = os.path.getsize(onnx_path)
    quantized_size = os.path.getsize(out_path)
    accuracy = float(n_correct_float / n_samples)
    quantized_accuracy = float(n_correct_int8 / n_samples)
    return {
        "size_bytes": size,
        "quantized_size_bytes": quantized_size,
        "size_ratio": quantized_size / size,
        "accuracy": accuracy,
        "quantized_accuracy": quantized_accuracy,
        "accuracy_change": quantized_accuracy - accuracy,
        "speed_ratio": float_time / int8_time,
    }
