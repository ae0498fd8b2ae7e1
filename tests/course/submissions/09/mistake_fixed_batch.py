# Corpus: no dynamic batch dimension: the file only takes batches of the example's size.
# %% ch09_export_classifier points=0 feedback="batch dimension dynamic"
def export_classifier(model, example_inputs, path):
    modes = {m: m.training for m in model.modules()}
    model.eval()
    program = torch.onnx.export(model, (example_inputs,), dynamo=True, input_names=["images"],
                                output_names=["logits"], verbose=False)
    program.save(str(path))
    for m, mode in modes.items():
        m.train(mode)
