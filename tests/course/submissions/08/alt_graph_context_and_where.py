# Corpus: more correct styles: diagnose_export reading the graph (a Dropout fed a constant True,
# removed before comparing) with a context manager restoring every submodule's mode, torch.where on
# a 0-d condition, per-channel quantization after ONNX Runtime's pre-processing, a running mean.
# %% ch08_diagnose_export points=4 feedback=passed
import contextlib

import onnx.numpy_helper


@contextlib.contextmanager
def evaluating(model):
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        yield model
    finally:
        for m, mode in modes:
            m.train(mode)


def _constant(graph, name):
    for tensor in graph.initializer:
        if tensor.name == name:
            return onnx.numpy_helper.to_array(tensor)
    for node in graph.node:
        if node.op_type == "Constant" and node.output[0] == name:
            return onnx.numpy_helper.to_array(node.attribute[0].t)
    return None


def diagnose_export(model, path, batches, atol=1e-4):
    """Read the graph for names, batch and dropout; compare a dropout-free copy with the model."""
    proto = onnx.load(str(path))
    graph = proto.graph
    found = set()
    if len(graph.input) != 1 or graph.input[0].name != "images" or len(graph.output) != 1 \
            or graph.output[0].name != "logits":
        found.add("names")
    dim0 = graph.input[0].type.tensor_type.shape.dim[0]
    if dim0.HasField("dim_value"):
        found.add("fixed_batch")
    training = [n for n in graph.node if n.op_type == "Dropout" and len(n.input) > 2
                and _constant(graph, n.input[2]) is not None and bool(_constant(graph, n.input[2]))]
    if training:
        found.add("training_mode")
    # Without its dropouts, the graph computes what it would in inference.
    for node in training:
        for other in graph.node:
            other.input[:] = [node.input[0] if i == node.output[0] else i for i in other.input]
        for out in graph.output:
            if out.name == node.output[0]:
                out.name = node.input[0]
        graph.node.remove(node)
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    rows = torch.cat(batches)
    step = dim0.dim_value if dim0.HasField("dim_value") else len(rows)
    with evaluating(model), torch.no_grad():
        for start in range(0, len(rows) - step + 1, step):
            x = rows[start:start + step]
            got = session.run(None, {graph.input[0].name: x.numpy()})[0]
            if (torch.from_numpy(got) - model(x)).abs().max().item() > atol:
                found.add("stale_weights")
    return found
# %% ch08_exportable_router points=3 feedback=passed
class ExportableRouter(Router):
    def forward(self, x):
        h = self.body(x)
        high, low = self.high(h), self.low(h)
        return torch.where(h.mean() > 0, high, low)
# %% ch08_quantize_and_report points=3 feedback=passed
def quantize_and_report(onnx_path, out_path, loader):
    from onnxruntime.quantization import QuantType, quant_pre_process, quantize_dynamic

    prepared = str(out_path) + ".prepared.onnx"
    quant_pre_process(str(onnx_path), prepared)
    quantize_dynamic(prepared, str(out_path), per_channel=True, weight_type=QuantType.QInt8)
    os.remove(prepared)
    original = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    quantized = ort.InferenceSession(str(out_path), providers=["CPUExecutionProvider"])
    key = original.get_inputs()[0].name
    mean_float = mean_int8 = 0.0
    seen = 0
    for inputs, targets in loader:
        n = len(targets)
        hits_float = (torch.from_numpy(original.run(None, {key: inputs.numpy()})[0]).argmax(1) == targets).float().mean().item()
        hits_int8 = (torch.from_numpy(quantized.run(None, {key: inputs.numpy()})[0]).argmax(1) == targets).float().mean().item()
        mean_float = (mean_float * seen + hits_float * n) / (seen + n)  # running mean, weighted by n
        mean_int8 = (mean_int8 * seen + hits_int8 * n) / (seen + n)
        seen += n
    batch = {key: next(iter(loader))[0].numpy()}
    elapsed = {}
    for label, session in (("float", original), ("int8", quantized)):
        session.run(None, batch)
        start = time.perf_counter()
        for _ in range(20):
            session.run(None, batch)
        elapsed[label] = time.perf_counter() - start
    before, after = os.path.getsize(onnx_path), os.path.getsize(out_path)
    return dict(size_bytes=before, quantized_size_bytes=after, size_ratio=after / before,
                accuracy=mean_float, quantized_accuracy=mean_int8,
                accuracy_change=mean_int8 - mean_float, speed_ratio=elapsed["float"] / elapsed["int8"])
