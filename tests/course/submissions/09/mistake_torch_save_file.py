# Corpus: writes the state_dict with torch.save under the .onnx name: not an ONNX model.
# %% ch09_export_classifier points=0 feedback="not an ONNX model"
def export_classifier(model, example_inputs, path):
    torch.save(model.state_dict(), path)
