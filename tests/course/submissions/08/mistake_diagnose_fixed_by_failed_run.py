# Corpus: a second try after the first answer's feedback: a batch that the file refuses now counts as
# 'fixed_batch', but only the batches it runs are compared. When none of the check batches has the size
# fixed inside the graph, an older checkpoint's weights go unseen.
# %% ch08_diagnose_export points=0 feedback="which its input does not declare here"
def diagnose_export(model, path, batches, atol=1e-4):
    strict = ort.SessionOptions()
    strict.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    strict.log_severity_level = 4
    raw = ort.InferenceSession(str(path), strict, providers=["CPUExecutionProvider"])
    quiet = ort.SessionOptions()
    quiet.log_severity_level = 4
    optimized = ort.InferenceSession(str(path), quiet, providers=["CPUExecutionProvider"])
    (inp,), outputs = raw.get_inputs(), raw.get_outputs()
    problems = set()
    if inp.name != "images" or [o.name for o in outputs] != ["logits"]:
        problems.add("names")
    declared = inp.shape[0]
    if isinstance(declared, int):
        problems.add("fixed_batch")
        rows = torch.cat(batches)
        batches = [rows[i:i + declared] for i in range(0, len(rows) - declared + 1, declared)]
    modes = {m: m.training for m in model.modules()}
    model.eval()
    try:
        for b in batches:
            feed = {inp.name: b.numpy()}
            try:
                once = raw.run(None, feed)[0]
            except Exception:  # refused: the size is fixed inside the graph
                problems.add("fixed_batch")
                continue
            if not np.array_equal(once, raw.run(None, feed)[0]):
                problems.add("training_mode")
            with torch.no_grad():
                want = model(b).numpy()
            if np.abs(optimized.run(None, feed)[0] - want).max() > atol:
                problems.add("stale_weights")
    finally:
        for m, training in modes.items():
            m.training = training
    return problems
