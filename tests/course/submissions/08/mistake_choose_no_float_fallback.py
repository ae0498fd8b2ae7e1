# Corpus: choose_quantization that always ships an int8 file, the one with the smallest drop when
# none is within the budget: fails where the float file should ship.
# %% ch08_choose_quantization points=0 feedback="above the budget"
def choose_quantization(onnx_path, out_path, loader, max_accuracy_drop):
    from onnxruntime.quantization import QuantType, quantize_dynamic

    folder = tempfile.mkdtemp()
    files = {"float": str(onnx_path)}
    for name, ops in (("int8_matmul", ["MatMul", "Gemm"]), ("int8_all", None)):
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
    fits = [k for k in ("int8_matmul", "int8_all") if candidates[k]["accuracy_drop"] <= max_accuracy_drop]
    if fits:
        choice = min(fits, key=lambda k: candidates[k]["size_bytes"])
    else:  # quantization is the point of the exercise, surely: the least bad int8 file
        choice = min(("int8_matmul", "int8_all"), key=lambda k: candidates[k]["accuracy_drop"])
    shutil.copy(files[choice], out_path)
    return {"choice": choice, "candidates": candidates}
