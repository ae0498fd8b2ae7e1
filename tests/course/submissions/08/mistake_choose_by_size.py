# Corpus: choose_quantization that measures the versions but ships the smallest whatever its drop
# (the budget never consulted): fails wherever the smallest breaks the budget.
# %% ch08_choose_quantization points=0 feedback="above the budget"
def choose_quantization(onnx_path, out_path, loader, max_accuracy_drop):
    from onnxruntime.quantization import QuantType, quantize_dynamic

    folder = tempfile.mkdtemp()
    files = {"float": str(onnx_path), "int8": os.path.join(folder, "int8.onnx")}
    quantize_dynamic(str(onnx_path), files["int8"], weight_type=QuantType.QInt8, reduce_range=True)
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
    shutil.copy(files["int8"], out_path)  # int8 is smaller: the budget is never looked at
    return {"choice": "int8", "candidates": candidates}
