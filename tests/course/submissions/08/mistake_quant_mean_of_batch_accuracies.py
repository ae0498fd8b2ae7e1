# Corpus: accuracy as the mean of the batches' accuracies: the short last batch weighs as much as
# a full one.
# %% ch08_quantize_and_report points=0 feedback="mean of the batches"
def quantize_and_report(onnx_path, out_path, loader):
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(onnx_path), str(out_path), weight_type=QuantType.QInt8)
    sessions = [ort.InferenceSession(str(p), providers=["CPUExecutionProvider"]) for p in (onnx_path, out_path)]
    name = sessions[0].get_inputs()[0].name
    accuracies = [[], []]
    for inputs, targets in loader:
        for i, session in enumerate(sessions):
            predicted = session.run(None, {name: inputs.numpy()})[0].argmax(1)
            accuracies[i].append(float((predicted == targets.numpy()).mean()))
    accuracy, quantized_accuracy = (sum(a) / len(a) for a in accuracies)
    batch = {name: next(iter(loader))[0].numpy()}
    times = []
    for session in sessions:
        start = time.perf_counter()
        for _ in range(20):
            session.run(None, batch)
        times.append(time.perf_counter() - start)
    size, quantized_size = os.path.getsize(onnx_path), os.path.getsize(out_path)
    return {"size_bytes": size, "quantized_size_bytes": quantized_size,
            "size_ratio": quantized_size / size, "accuracy": accuracy,
            "quantized_accuracy": quantized_accuracy,
            "accuracy_change": quantized_accuracy - accuracy, "speed_ratio": times[0] / times[1]}
