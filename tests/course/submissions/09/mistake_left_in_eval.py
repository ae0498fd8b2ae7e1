# Corpus: a correct file, but the model is handed back in eval mode.
# %% ch09_export_classifier points=0 feedback="modes changed"
def export_classifier(model, example_inputs, path):
    model.eval()
    program = torch.onnx.export(model, (example_inputs,), dynamo=True, input_names=["images"],
                                output_names=["logits"],
                                dynamic_shapes=({0: torch.export.Dim("batch")},), verbose=False)
    program.save(str(path))
