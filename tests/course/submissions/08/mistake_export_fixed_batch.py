# Corpus: exported without dynamic_shapes: the batch size is frozen to the example's.
# %% ch08_export_and_verify points=0 feedback="is the batch dimension dynamic"
def export_and_verify(model, example, path, check_batches, atol=1e-4):
    was_training = model.training
    model.eval()
    torch.onnx.export(model, (example,), path, dynamo=True, input_names=["images"],
                      output_names=["logits"], verbose=False)
    onnx.checker.check_model(str(path), full_check=True)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    diffs = []
    with torch.no_grad():
        for batch in check_batches:
            got = session.run(None, {"images": batch.numpy()})[0]
            diffs.append(float(np.abs(got - model(batch).numpy()).max()))
    model.train(was_training)
    assert max(diffs) <= atol, f"differences {diffs}"
    return diffs
