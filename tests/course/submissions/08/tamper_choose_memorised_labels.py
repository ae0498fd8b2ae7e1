# Corpus: a hostile answer that ships no version of the model: a tiny ONNX lookup table that
# memorises the loader's labels (three pixels as the key). It is smaller than every int8 file and
# scores full accuracy on the loader, so only the grader's check on images the loader never held
# catches it.
# %% ch08_choose_quantization points=0 feedback="not a version of the model"
def choose_quantization(onnx_path, out_path, loader, max_accuracy_drop):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    batches = [(inputs.numpy().astype(np.float32), targets.numpy()) for inputs, targets in loader]
    weights = np.array([[1.0], [256.0], [65536.0]], dtype=np.float32)

    def keys(x):  # three pixels, 0-255 each, packed into one exact float32
        return (np.floor(x.reshape(len(x), -1)[:, :3] * np.float32(255)) @ weights)[:, 0]

    table = np.concatenate([keys(x) for x, _ in batches]).astype(np.float32)
    labels = np.concatenate([y for _, y in batches]).astype(np.int64)
    nodes = [
        helper.make_node("Flatten", ["images"], ["flat"], axis=1),
        helper.make_node("Slice", ["flat", "zero", "three", "one"], ["pixels"]),
        helper.make_node("Mul", ["pixels", "k255"], ["scaled"]),
        helper.make_node("Floor", ["scaled"], ["levels"]),
        helper.make_node("MatMul", ["levels", "packing"], ["key"]),
        helper.make_node("Equal", ["key", "table"], ["hits"]),
        helper.make_node("Cast", ["hits"], ["hits_f"], to=TensorProto.FLOAT),
        helper.make_node("ArgMax", ["hits_f"], ["row"], axis=1, keepdims=0),
        helper.make_node("Gather", ["labels", "row"], ["label"]),
        helper.make_node("OneHot", ["label", "depth", "values"], ["logits"], axis=-1),
    ]
    init = [numpy_helper.from_array(v, n) for n, v in [
        ("zero", np.array([0], np.int64)), ("three", np.array([3], np.int64)), ("one", np.array([1], np.int64)),
        ("k255", np.array(255, np.float32)), ("packing", weights), ("table", table[None, :]),
        ("labels", labels), ("depth", np.array(10, np.int64)), ("values", np.array([0, 1], np.float32))]]
    source = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    shape = ["batch"] + list(source.get_inputs()[0].shape[1:])
    graph = helper.make_graph(nodes, "lookup",
                              [helper.make_tensor_value_info("images", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 10])], init)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=9), str(out_path))
    files = {"float": str(onnx_path), "int8": str(out_path)}
    hits, n = dict.fromkeys(files, 0), sum(len(y) for _, y in batches)
    for name, path in files.items():
        session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        feed = session.get_inputs()[0].name
        for x, y in batches:
            hits[name] += int((session.run(None, {feed: x})[0].argmax(1) == y).sum())
    candidates = {k: {"size_bytes": os.path.getsize(p), "accuracy": hits[k] / n,
                      "accuracy_drop": (hits["float"] - hits[k]) / n} for k, p in files.items()}
    return {"choice": "int8", "candidates": candidates}
