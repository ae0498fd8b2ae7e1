# Corpus: model.train() at the end: right for a model that was all in train mode, wrong for one
# whose batch norm was frozen in eval mode (the second hidden model).
# %% ch09_export_classifier points=0 feedback="one model.train() at the end is not enough"
def export_classifier(model, example_inputs, path):
    model.eval()
    program = torch.onnx.export(model, (example_inputs,), dynamo=True, input_names=["images"],
                                output_names=["logits"],
                                dynamic_shapes=({0: torch.export.Dim("batch")},), verbose=False)
    program.save(str(path))
    model.train()
