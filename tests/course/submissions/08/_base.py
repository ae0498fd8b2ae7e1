# Corpus: a learner's correct answers, written from the docstrings (the base of every other file).
# %% ch08_export_and_verify points=4 feedback=passed
def export_and_verify(model, example, path, check_batches, atol=1e-4):
    was_training = model.training
    model.eval()
    try:
        torch.onnx.export(
            model, (example,), path, dynamo=True,
            input_names=["images"], output_names=["logits"],
            dynamic_shapes=({0: torch.export.Dim("batch")},),
            verbose=False,
        )
    finally:
        model.train(was_training)
    onnx.checker.check_model(str(path), full_check=True)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    model.eval()
    diffs = []
    with torch.no_grad():
        for batch in check_batches:
            onnx_out = session.run(None, {"images": batch.numpy()})[0]
            torch_out = model(batch).numpy()
            diffs.append(float(np.max(np.abs(onnx_out - torch_out))))
    model.train(was_training)
    for batch, diff in zip(check_batches, diffs):
        if diff > atol:
            raise AssertionError(f"batch size {batch.shape[0]}: difference {diff} > {atol}")
    return diffs
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
