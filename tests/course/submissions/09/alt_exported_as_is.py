# Corpus: exports the model in the mode it came in, without model.eval(): the current exporter
# writes an inference graph anyway (batch norm's running statistics, dropout off), so the file
# gives the eval-mode answers and the model's modes are untouched. Full marks.
# %% ch09_export_classifier points=3 feedback=passed
def export_classifier(model, example_inputs, path):
    program = torch.onnx.export(model, (example_inputs,), dynamo=True, input_names=["images"],
                                output_names=["logits"],
                                dynamic_shapes=({0: torch.export.Dim("batch")},), verbose=False)
    program.save(str(path))
