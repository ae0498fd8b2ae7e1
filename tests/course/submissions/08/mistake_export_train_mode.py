# Corpus: no eval(): exported in training mode (Dropout in the file) and compared with the
# training-mode model, whose dropout makes every comparison fail.
# %% ch08_export_and_verify points=0 feedback="eval mode"
def export_and_verify(model, example, path, check_batches, atol=1e-4):
    torch.onnx.export(model, (example,), path, dynamo=True, input_names=["images"],
                      output_names=["logits"], dynamic_shapes=({0: torch.export.Dim("batch")},),
                      verbose=False)
    onnx.checker.check_model(str(path), full_check=True)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    diffs = []
    with torch.no_grad():
        for batch in check_batches:
            got = session.run(None, {"images": batch.numpy()})[0]
            diffs.append(float(np.abs(got - model(batch).numpy()).max()))
    for diff in diffs:
        if diff > atol:
            raise AssertionError(f"difference {diff} > {atol}")
    return diffs
