# Corpus: a hostile answer found in a hostile pass: a tiny ONNX file that memorises the loader's
# labels and falls back to a linear model fitted to the float file's logits on random images. It
# is smaller than the grader's int8 files, perfect on the loader, and gave the float file's class
# to about 40 % of new images, above the agreement bar on a CPU without VNNI: it scored 3/3. The
# grader now also checks that the shipped file holds the model's weights, as they are or quantized.
# %% ch08_choose_quantization points=0 feedback="does not hold the model's weights"
def choose_quantization(onnx_path, out_path, loader, max_accuracy_drop):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    source = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    feed = source.get_inputs()[0].name
    batches = [(inputs.numpy().astype(np.float32), targets.numpy()) for inputs, targets in loader]
    shape = list(batches[0][0].shape[1:])
    # a linear model fitted to the float file's logits on random images: not the model
    rng = np.random.default_rng(0)
    probe = rng.random((20000, *shape), dtype=np.float32)
    logits = source.run(None, {feed: probe})[0]
    design = np.c_[probe.reshape(len(probe), -1), np.ones(len(probe), np.float32)]
    coef, *_ = np.linalg.lstsq(design, logits, rcond=None)
    w, b = coef[:-1].astype(np.float32), coef[-1].astype(np.float32)
    # plus the loader's labels, memorised (three pixels as the key)
    packing = np.array([[1.0], [256.0], [65536.0]], dtype=np.float32)

    def keys(x):
        return (np.floor(x.reshape(len(x), -1)[:, :3] * np.float32(255)) @ packing)[:, 0]

    table = np.concatenate([keys(x) for x, _ in batches]).astype(np.float32)
    labels = np.concatenate([y for _, y in batches]).astype(np.float32)
    nodes = [
        helper.make_node("Flatten", ["images"], ["flat"], axis=1),
        helper.make_node("MatMul", ["flat", "w"], ["lin0"]),
        helper.make_node("Add", ["lin0", "b"], ["lin"]),
        helper.make_node("Slice", ["flat", "zero", "three", "one"], ["pixels"]),
        helper.make_node("Mul", ["pixels", "k255"], ["scaled"]),
        helper.make_node("Floor", ["scaled"], ["levels"]),
        helper.make_node("MatMul", ["levels", "packing"], ["key"]),
        helper.make_node("Equal", ["key", "table"], ["hits"]),
        helper.make_node("Cast", ["hits"], ["hits_f"], to=TensorProto.FLOAT),
        helper.make_node("ReduceMax", ["hits_f", "one"], ["any"], keepdims=1),
        helper.make_node("ArgMax", ["hits_f"], ["row"], axis=1, keepdims=0),
        helper.make_node("Gather", ["labels", "row"], ["label_f"]),
        helper.make_node("Cast", ["label_f"], ["label"], to=TensorProto.INT64),
        helper.make_node("OneHot", ["label", "depth", "values"], ["onehot"], axis=-1),
        helper.make_node("Mul", ["onehot", "any"], ["mask"]),
        helper.make_node("Mul", ["mask", "big"], ["boost"]),
        helper.make_node("Add", ["lin", "boost"], ["logits"]),
    ]
    init = [numpy_helper.from_array(v, n) for n, v in [
        ("w", w), ("b", b),
        ("zero", np.array([0], np.int64)), ("three", np.array([3], np.int64)), ("one", np.array([1], np.int64)),
        ("k255", np.array(255, np.float32)), ("packing", packing), ("table", table[None, :]),
        ("labels", labels), ("depth", np.array(10, np.int64)), ("values", np.array([0, 1], np.float32)),
        ("big", np.array(1e4, np.float32))]]
    graph = helper.make_graph(nodes, "not_the_model",
                              [helper.make_tensor_value_info("images", TensorProto.FLOAT, ["batch"] + shape)],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 10])], init)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=9), str(out_path))
    files = {"float": str(onnx_path), "int8": str(out_path)}
    hits, n = dict.fromkeys(files, 0), sum(len(y) for _, y in batches)
    for name, path in files.items():
        session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        f = session.get_inputs()[0].name
        for x, y in batches:
            hits[name] += int((session.run(None, {f: x})[0].argmax(1) == y).sum())
    candidates = {k: {"size_bytes": os.path.getsize(p), "accuracy": hits[k] / n,
                      "accuracy_drop": (hits["float"] - hits[k]) / n} for k, p in files.items()}
    return {"choice": "int8", "candidates": candidates}
