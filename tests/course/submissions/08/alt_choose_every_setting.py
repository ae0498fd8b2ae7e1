# Corpus: choose_quantization that measures per-tensor and per-channel versions in 7 and 8 bits,
# after ONNX Runtime's pre-processing, and walks them from the smallest up: full marks on CPUs with
# and without VNNI.
# %% ch08_choose_quantization points=3 feedback=passed
import itertools
from onnxruntime.quantization import QuantType, quant_pre_process, quantize_dynamic


def choose_quantization(onnx_path, out_path, loader, max_accuracy_drop):
    folder = Path(tempfile.mkdtemp())
    prepared = folder / "prepared.onnx"
    quant_pre_process(str(onnx_path), str(prepared))
    files = {"float": Path(onnx_path)}
    for ops, reduce_range, per_channel in itertools.product((("MatMul", "Gemm"), None), (True, False), (False, True)):
        name = f"{'mm' if ops else 'all'}-{7 if reduce_range else 8}bit-{'pc' if per_channel else 'pt'}"
        files[name] = folder / f"{name}.onnx"
        quantize_dynamic(prepared, files[name], weight_type=QuantType.QInt8, reduce_range=reduce_range,
                         per_channel=per_channel, op_types_to_quantize=list(ops) if ops else None)
    batches = list(loader)
    y = np.concatenate([t.numpy() for _, t in batches])
    candidates = {}
    for name, path in files.items():
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        feed = session.get_inputs()[0].name
        predicted = np.concatenate([session.run(None, {feed: x.numpy()})[0].argmax(-1) for x, _ in batches])
        candidates[name] = {"size_bytes": path.stat().st_size, "accuracy": float(np.mean(predicted == y))}
    for entry in candidates.values():
        entry["accuracy_drop"] = candidates["float"]["accuracy"] - entry["accuracy"]
    for name in sorted(candidates, key=lambda n: candidates[n]["size_bytes"]):
        if name == "float" or candidates[name]["accuracy_drop"] <= max_accuracy_drop:
            break
    Path(out_path).write_bytes(files[name].read_bytes())
    return {"choice": name, "candidates": candidates}
