# Corpus: the differences are computed and returned but never compared with atol: a file that
# disagrees with the model passes silently.
# %% ch08_export_and_verify points=0 feedback="raise AssertionError"
def export_and_verify(model, example, path, check_batches, atol=1e-4):
    was_training = model.training
    model.eval()
    torch.onnx.export(model, (example,), path, dynamo=True, input_names=["images"],
                      output_names=["logits"], dynamic_shapes=({0: torch.export.Dim("batch")},),
                      verbose=False)
    onnx.checker.check_model(str(path), full_check=True)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    with torch.no_grad():
        diffs = [float(np.abs(session.run(None, {"images": b.numpy()})[0] - model(b).numpy()).max())
                 for b in check_batches]
    model.train(was_training)
    return diffs
