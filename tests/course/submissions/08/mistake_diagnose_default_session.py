# Corpus: diagnose_export with ONNX Runtime's default session only: the training-mode Dropout is
# optimized away before it can drop, so 'training_mode' is never found.
# %% ch08_diagnose_export points=0 feedback="'training_mode' was missing"
def diagnose_export(model, path, batches, atol=1e-4):
    problems = set()
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    inputs, outputs = session.get_inputs(), session.get_outputs()
    if inputs[0].name != "images" or outputs[0].name != "logits":
        problems.add("names")

    def runs(x):  # whether the file takes this many rows, whatever its input declares
        try:
            session.run(None, {inputs[0].name: x.numpy()})
        except Exception:
            return False
        return True

    rows = torch.cat(batches)
    if not (runs(rows[:1]) and runs(rows[:2])):  # the size is fixed, in the input or inside the graph
        problems.add("fixed_batch")
        size = next(n for n in range(1, len(rows) + 1) if runs(rows[:n]))
        batches = [rows[i:i + size] for i in range(0, len(rows) - size + 1, size)]
    was_training = model.training
    model.eval()
    with torch.no_grad():
        for b in batches:
            feed = {inputs[0].name: b.numpy()}
            first, second = session.run(None, feed)[0], session.run(None, feed)[0]
            if not np.array_equal(first, second):
                problems.add("training_mode")
            if np.abs(first - model(b).numpy()).max() > atol:
                problems.add("stale_weights")
    model.train(was_training)
    return problems
