# Corpus: choose_quantization that weighs int8_all against float only: when quantizing
# everything breaks the budget, the float file ships though the int8_matmul file it measured fits.
# %% ch08_choose_quantization points=0 feedback="you measured it within the budget"
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
    for k in ("int8_all",):
        ok = candidates[k]["accuracy_drop"] <= max_accuracy_drop
        if ok and candidates[k]["size_bytes"] < candidates[choice]["size_bytes"]:
            choice = k
    shutil.copy(files[choice], out_path)
    return {"choice": choice, "candidates": candidates}
