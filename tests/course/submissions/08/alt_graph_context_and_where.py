# Corpus: more correct styles: a context manager restoring every submodule's mode, torch.where on
# a 0-d condition, per-channel quantization after ONNX Runtime's pre-processing, a running mean.
# %% ch08_export_and_verify points=4 feedback=passed
import contextlib


@contextlib.contextmanager
def evaluating(model):
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        yield model
    finally:
        for m, mode in modes:
            m.train(mode)


def export_and_verify(model, example, path, check_batches, atol=1e-4):
    with evaluating(model):
        torch.onnx.export(model, example, str(path), dynamo=True, external_data=False,
                          dynamic_shapes=({0: "batch"},),
                          input_names=["images"], output_names=["logits"], verbose=False)
        onnx.checker.check_model(str(path), full_check=True)
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        with torch.no_grad():
            diffs = [
                float(np.abs(session.run(None, {"images": b.numpy()})[0] - model(b).numpy()).max())
                for b in check_batches
            ]
    if max(diffs, default=0.0) > atol:
        raise AssertionError(f"differences {diffs} exceed atol={atol}")
    return diffs
# %% ch08_exportable_router points=3 feedback=passed
class ExportableRouter(Router):
    def forward(self, x):
        h = self.body(x)
        high, low = self.high(h), self.low(h)
        return torch.where(h.mean() > 0, high, low)
# %% ch08_quantize_and_report points=3 feedback=passed
def quantize_and_report(onnx_path, out_path, loader):
    from onnxruntime.quantization import QuantType, quant_pre_process, quantize_dynamic

    prepared = str(out_path) + ".prepared.onnx"
    quant_pre_process(str(onnx_path), prepared)
    quantize_dynamic(prepared, str(out_path), per_channel=True, weight_type=QuantType.QInt8)
    os.remove(prepared)
    original = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    quantized = ort.InferenceSession(str(out_path), providers=["CPUExecutionProvider"])
    key = original.get_inputs()[0].name
    mean_float = mean_int8 = 0.0
    seen = 0
    for inputs, targets in loader:
        n = len(targets)
        hits_float = (torch.from_numpy(original.run(None, {key: inputs.numpy()})[0]).argmax(1) == targets).float().mean().item()
        hits_int8 = (torch.from_numpy(quantized.run(None, {key: inputs.numpy()})[0]).argmax(1) == targets).float().mean().item()
        mean_float = (mean_float * seen + hits_float * n) / (seen + n)  # running mean, weighted by n
        mean_int8 = (mean_int8 * seen + hits_int8 * n) / (seen + n)
        seen += n
    batch = {key: next(iter(loader))[0].numpy()}
    elapsed = {}
    for label, session in (("float", original), ("int8", quantized)):
        session.run(None, batch)
        start = time.perf_counter()
        for _ in range(20):
            session.run(None, batch)
        elapsed[label] = time.perf_counter() - start
    before, after = os.path.getsize(onnx_path), os.path.getsize(out_path)
    return dict(size_bytes=before, quantized_size_bytes=after, size_ratio=after / before,
                accuracy=mean_float, quantized_accuracy=mean_int8,
                accuracy_change=mean_int8 - mean_float, speed_ratio=elapsed["float"] / elapsed["int8"])
