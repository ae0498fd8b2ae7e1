# Corpus: exported in training mode, but compared in eval mode: ONNX Runtime's optimizer hides
# the Dropout, the differences look fine, and the file still holds training-mode operators.
# %% ch08_export_and_verify points=0 feedback="Dropout"
def export_and_verify(model, example, path, check_batches, atol=1e-4):
    was_training = model.training
    torch.onnx.export(model, (example,), path, dynamo=True, input_names=["images"],
                      output_names=["logits"], dynamic_shapes=({0: torch.export.Dim("batch")},),
                      verbose=False)
    onnx.checker.check_model(str(path), full_check=True)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    model.eval()
    diffs = []
    with torch.no_grad():
        for batch in check_batches:
            got = session.run(None, {"images": batch.numpy()})[0]
            diffs.append(float(np.abs(got - model(batch).numpy()).max()))
    model.train(was_training)
    for diff in diffs:
        if diff > atol:
            raise AssertionError(f"difference {diff} > {atol}")
    return diffs
