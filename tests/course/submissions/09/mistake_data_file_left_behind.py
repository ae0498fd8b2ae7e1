# Corpus: exports to a temporary folder with torch.onnx.export's defaults and copies only the
# .onnx file to path: the external-data file with the weights stays behind, and the file at path
# cannot be opened (the visible model is small enough to keep its weights inside, so it passes).
# %% ch09_export_classifier points=0 feedback="external-data file"
import shutil


def export_classifier(model, example_inputs, path):
    modes = [m.training for m in model.modules()]
    model.eval()
    scratch = Path(tempfile.mkdtemp()) / "export.onnx"
    torch.onnx.export(model, (example_inputs,), scratch, input_names=["images"],
                      output_names=["logits"], dynamic_shapes=({0: torch.export.Dim("batch")},))
    shutil.copy(scratch, path)
    for m, mode in zip(model.modules(), modes):
        m.train(mode)
