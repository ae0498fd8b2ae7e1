# Corpus: choose_quantization that measures only per-channel int8 versions (7 bits): where they lose
# accuracy, the per-tensor version of the same size that fits is never measured; named as made with
# other settings.
# %% ch08_choose_quantization points=0 feedback="made with other settings"
def choose_quantization(onnx_path, out_path, loader, max_accuracy_drop):
    from onnxruntime.quantization import QuantType, quantize_dynamic

    folder = tempfile.mkdtemp()
    files = {"float": str(onnx_path)}
    for name, ops in (("matmul_pc", ["MatMul", "Gemm"]), ("all_pc", None)):
        files[name] = os.path.join(folder, name + ".onnx")
        quantize_dynamic(str(onnx_path), files[name], weight_type=QuantType.QInt8, reduce_range=True,
                         per_channel=True, op_types_to_quantize=ops)
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
    shutil.copy(files[choice], out_path)
    return {"choice": choice, "candidates": candidates}
