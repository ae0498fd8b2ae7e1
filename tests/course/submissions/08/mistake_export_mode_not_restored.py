# Corpus: model.eval() and never back: a model handed over in training mode comes back in eval
# mode, and the next training epoch runs without dropout.
# %% ch08_export_and_verify points=0 feedback="mode changed"
def export_and_verify(model, example, path, check_batches, atol=1e-4):
    model.eval()
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
    assert all(d <= atol for d in diffs), f"differences {diffs}"
    return diffs
