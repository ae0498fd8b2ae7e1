# Corpus: another correct export: torch.onnx.export writes the file itself (f=path, its default
# external_data=True), so the weights of the larger hidden models sit in model.onnx.data beside
# it; ONNX Runtime opens the pair from path. Modes saved by module and put back.
# %% ch09_export_classifier points=3 feedback=passed
def export_classifier(model, example_inputs, path):
    modes = [m.training for m in model.modules()]
    model.eval()
    try:
        torch.onnx.export(model, (example_inputs,), path, input_names=["images"],
                          output_names=["logits"],
                          dynamic_shapes=({0: torch.export.Dim("batch")},))
    finally:
        for m, mode in zip(model.modules(), modes):
            m.train(mode)
