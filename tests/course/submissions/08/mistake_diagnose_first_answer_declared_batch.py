# Corpus: the natural first answer to diagnose_export, written after one careful reading: it reads the
# batch size from the input's declared shape. A file that declares a symbolic batch but fixes it inside
# the graph (a Reshape to 3 rows, as the legacy tracer writes for a forward that uses len(x)) refuses
# the check batches, and the function raises on it instead of naming 'fixed_batch'.
# %% ch08_diagnose_export points=0 feedback="inside the graph"
def diagnose_export(model, path, batches, atol=1e-4):
    problems = set()
    as_written = ort.SessionOptions()
    as_written.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    raw = ort.InferenceSession(str(path), as_written, providers=["CPUExecutionProvider"])
    optimized = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    inputs, outputs = raw.get_inputs(), raw.get_outputs()
    if [i.name for i in inputs] != ["images"] or [o.name for o in outputs] != ["logits"]:
        problems.add("names")
    batch_size = inputs[0].shape[0]  # an int when fixed, a name like 'batch' when dynamic
    if isinstance(batch_size, int):
        problems.add("fixed_batch")
        rows = torch.cat(batches)
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
        once, twice = raw.run(None, feed)[0], raw.run(None, feed)[0]
        if not np.array_equal(once, twice):
            problems.add("training_mode")
        if np.max(np.abs(optimized.run(None, feed)[0] - want)) > atol:
            problems.add("stale_weights")
    return problems
