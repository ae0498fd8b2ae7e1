# Corpus: exports the model in the mode it came in, without model.eval(): the current exporter
# writes batch norm's running statistics but keeps dropout as a Dropout node in training mode.
# ONNX Runtime's default optimizations delete that node, so the file looks right; without them
# dropout is on and the answers change from call to call. Not an inference graph.
# %% ch09_export_classifier points=0 feedback="without ONNX Runtime's graph optimizations"
def export_classifier(model, example_inputs, path):
    program = torch.onnx.export(model, (example_inputs,), dynamo=True, input_names=["images"],
                                output_names=["logits"],
                                dynamic_shapes=({0: torch.export.Dim("batch")},), verbose=False)
    program.save(str(path))
