# Corpus: the names set afterwards by renaming the graph's input and output in the ONNX proto: the
# nodes still read and write the old names, so the file is no longer a valid graph.
# %% ch08_export_and_verify points=0 feedback="the ONNX checker rejects the file"
def export_and_verify(model, example, path, check_batches, atol=1e-4):
    was_training = model.training
    model.eval()
    try:
        torch.onnx.export(
            model, (example,), path, dynamo=True,
            dynamic_shapes=({0: torch.export.Dim("batch")},),
            verbose=False,
        )
    finally:
        model.train(was_training)
    proto = onnx.load(str(path))
    proto.graph.input[0].name = "images"  # rename after the fact
    proto.graph.output[0].name = "logits"
    onnx.save(proto, str(path))
    onnx.checker.check_model(str(path), full_check=True)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    model.eval()
    diffs = []
    with torch.no_grad():
        for batch in check_batches:
            onnx_out = session.run(None, {"images": batch.numpy()})[0]
            torch_out = model(batch).numpy()
            diffs.append(float(np.max(np.abs(onnx_out - torch_out))))
    model.train(was_training)
    for batch, diff in zip(check_batches, diffs):
        if diff > atol:
            raise AssertionError(f"batch size {batch.shape[0]}: difference {diff} > {atol}")
    return diffs
