# Corpus: choose_quantization that measures 7-bit versions, then writes the chosen one again with
# the quantizer's defaults (full 8 bits) to out_path: the shipped file is not the one measured, and
# its accuracy on the loader's batches is not the one reported.
# %% ch08_choose_quantization points=0 feedback="run on the loader's batches it is"
def choose_quantization(onnx_path, out_path, loader, max_accuracy_drop):
    from onnxruntime.quantization import QuantType, quantize_dynamic

    settings = {"int8_matmul": ["MatMul", "Gemm"], "int8_all": None}
    folder = tempfile.mkdtemp()
    files = {"float": str(onnx_path)}
    for name, ops in settings.items():
        files[name] = os.path.join(folder, name + ".onnx")
        quantize_dynamic(str(onnx_path), files[name], weight_type=QuantType.QInt8, reduce_range=True,
                         op_types_to_quantize=ops)
    sessions = {k: ort.InferenceSession(p, providers=["CPUExecutionProvider"]) for k, p in files.items()}
    input_name = sessions["float"].get_inputs()[0].name
    hits = {k: 0 for k in files}
    n = 0
    for inputs, targets in loader:
        for k, s in sessions.items():
            hits[k] += int((s.run(None, {input_name: inputs.numpy()})[0].argmax(1) == targets.numpy()).sum())
        n += len(targets)
    candidates = {k: {"size_bytes": os.path.getsize(p), "accuracy": hits[k] / n,
                      "accuracy_drop": (hits["float"] - hits[k]) / n} for k, p in files.items()}
    fits = [k for k in files if k == "float" or candidates[k]["accuracy_drop"] <= max_accuracy_drop]
    choice = min(fits, key=lambda k: candidates[k]["size_bytes"])
    if choice == "float":
        shutil.copy(onnx_path, out_path)
    else:  # "the full 8 bits are more precise": quantized once more for the release
        quantize_dynamic(str(onnx_path), str(out_path), weight_type=QuantType.QInt8,
                         op_types_to_quantize=settings[choice])
    return {"choice": choice, "candidates": candidates}
