# Corpus: a hostile learner's export: the file is right, but the "differences" are a guessed
# float32-sized constant and the function raises whenever atol looks small, without comparing.
# %% ch08_export_and_verify points=0 feedback="the differences differ"
def export_and_verify(model, example, path, check_batches, atol=1e-4):
    was_training = model.training
    model.eval()
    torch.onnx.export(model, (example,), path, dynamo=True, input_names=["images"],
                      output_names=["logits"], dynamic_shapes=({0: torch.export.Dim("batch")},),
                      verbose=False)
    model.train(was_training)
    if atol < 1e-7:
        raise AssertionError("too strict")
    return [1e-7] * len(check_batches)
