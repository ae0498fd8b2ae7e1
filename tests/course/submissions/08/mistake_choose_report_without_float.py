# Corpus: choose_quantization that reports only the int8 files it made, not the float file it
# compared them with: the report leaves out what the drops were measured against.
# %% ch08_choose_quantization points=0 feedback="for 'float' and each file you measured"
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
    fits = [k for k in files if k == "float" or candidates[k]["accuracy_drop"] <= max_accuracy_drop]
    choice = min(fits, key=lambda k: candidates[k]["size_bytes"])
    shutil.copy(files[choice], out_path)
    del candidates["float"]  # the float file is the reference, not a candidate
    return {"choice": choice, "candidates": candidates}
