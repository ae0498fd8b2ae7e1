# Corpus: a correct export that keeps the exporter's default names for the input and the output.
# %% ch09_export_classifier points=0 feedback="named"
def export_classifier(model, example_inputs, path):
    modes = {m: m.training for m in model.modules()}
    model.eval()
    program = torch.onnx.export(model, (example_inputs,), dynamo=True,
                                dynamic_shapes=({0: torch.export.Dim("batch")},), verbose=False)
    program.save(str(path))
    for m, mode in modes.items():
        m.train(mode)
