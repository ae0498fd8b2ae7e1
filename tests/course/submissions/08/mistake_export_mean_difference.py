# Corpus: the mean absolute difference per batch instead of the largest: a single output far off
# hides among the others.
# %% ch08_export_and_verify points=0 feedback="largest absolute difference"
def export_and_verify(model, example, path, check_batches, atol=1e-4):
    was_training = model.training
    model.eval()
    try:
        torch.onnx.export(
            model, (example,), path, dynamo=True,
            input_names=["images"], output_names=["logits"],
            dynamic_shapes=({0: torch.export.Dim("batch")},),
            verbose=False,
        )
    finally:
        model.train(was_training)
    onnx.checker.check_model(str(path), full_check=True)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    model.eval()
    diffs = []
    with torch.no_grad():
        for batch in check_batches:
            onnx_out = session.run(None, {"images": batch.numpy()})[0]
            torch_out = model(batch).numpy()
            diffs.append(float(np.mean(np.abs(onnx_out - torch_out))))
    model.train(was_training)
    for batch, diff in zip(check_batches, diffs):
        if diff > atol:
            raise AssertionError(f"batch size {batch.shape[0]}: difference {diff} > {atol}")
    return diffs
