# Corpus: diagnose_export calls any graph with a Dropout node "training_mode" without running it;
# a Dropout whose training_mode is false (or not given) passes its input through, as in inference.
# %% ch08_diagnose_export points=0 feedback="a Dropout node is in inference mode unless its training_mode input is true"
def diagnose_export(model, path, batches, atol=1e-4):
    problems = set()
    as_written = ort.SessionOptions()
    as_written.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    raw = ort.InferenceSession(str(path), as_written, providers=["CPUExecutionProvider"])
    optimized = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    inputs, outputs = raw.get_inputs(), raw.get_outputs()
    if [i.name for i in inputs] != ["images"] or [o.name for o in outputs] != ["logits"]:
        problems.add("names")
    # a training-mode export keeps its Dropout node; an eval-mode export has none
    if any(node.op_type == "Dropout" for node in onnx.load(str(path)).graph.node):
        problems.add("training_mode")

    def runs(x):  # whether the file takes this many rows, whatever its input declares
        try:
            raw.run(None, {inputs[0].name: x.numpy()})
        except Exception:
            return False
        return True

    rows = torch.cat(batches)
    if not (runs(rows[:1]) and runs(rows[:2])):  # the size is fixed, in the input or inside the graph
        problems.add("fixed_batch")
        batch_size = next(n for n in range(1, len(rows) + 1) if runs(rows[:n]))
        batches = [rows[i:i + batch_size] for i in range(0, len(rows) - batch_size + 1, batch_size)]
    was_training = {m: m.training for m in model.modules()}
    model.eval()
    with torch.no_grad():
        expected = [model(b).numpy() for b in batches]
    for m, training in was_training.items():
        m.training = training
    feed_name = inputs[0].name
    for b, want in zip(batches, expected):
        feed = {feed_name: b.numpy()}
        if np.max(np.abs(optimized.run(None, feed)[0] - want)) > atol:
            problems.add("stale_weights")
    return problems
