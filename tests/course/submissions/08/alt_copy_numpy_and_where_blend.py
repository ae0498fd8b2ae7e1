# Corpus: other correct styles: the ONNXProgram saved by hand and compared in torch, a branch
# blended with a 0/1 mask, accuracy summed with NumPy and timed with timeit.
# %% ch08_export_and_verify points=4 feedback=passed
def export_and_verify(model, example, path, check_batches, atol=1e-4):
    saved_modes = {name: module.training for name, module in model.named_modules()}
    model.eval()
    program = torch.onnx.export(model, (example,), dynamo=True, verbose=False,
                                dynamic_shapes=[{0: torch.export.Dim.DYNAMIC}],
                                input_names=["images"], output_names=["logits"])
    program.save(str(path))
    onnx.checker.check_model(onnx.load(str(path)), full_check=True)
    sess = ort.InferenceSession(str(path))
    results = []
    with torch.inference_mode():
        for x in check_batches:
            expected = model(x)
            actual = torch.from_numpy(sess.run(["logits"], {"images": x.numpy()})[0])
            results.append((expected - actual).abs().max().item())
    for name, module in model.named_modules():
        module.training = saved_modes[name]
    bad = [(len(x), d) for x, d in zip(check_batches, results) if d > atol]
    assert not bad, f"ONNX Runtime disagrees with PyTorch on batches (size, diff): {bad}"
    return results
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
