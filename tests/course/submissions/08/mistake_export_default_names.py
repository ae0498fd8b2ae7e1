# Corpus: no input_names/output_names: the file's input is called "input", not "images", so
# serving code written against the contract cannot feed it.
# %% ch08_export_and_verify points=0 feedback="named"
def export_and_verify(model, example, path, check_batches, atol=1e-4):
    was_training = model.training
    model.eval()
    torch.onnx.export(model, (example,), path, dynamo=True,
                      dynamic_shapes=({0: torch.export.Dim("batch")},), verbose=False)
    onnx.checker.check_model(str(path), full_check=True)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    diffs = []
    with torch.no_grad():
        for batch in check_batches:
            got = session.run(None, {name: batch.numpy()})[0]
            diffs.append(float(np.abs(got - model(batch).numpy()).max()))
    model.train(was_training)
    assert all(d <= atol for d in diffs), f"differences {diffs}"
    return diffs
