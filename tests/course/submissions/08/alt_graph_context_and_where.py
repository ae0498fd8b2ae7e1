# Corpus: more correct styles: diagnose_export reading the graph (a Dropout fed a constant True,
# removed before comparing; a batch fixed inside the graph read from ONNX Runtime's inferred output
# shape) with a context manager restoring every submodule's mode, masked_fill on each head with a (B, 1) mask, candidates after ONNX Runtime's pre-processing ranked by size.
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
    # ONNX Runtime's shape inference sees a Reshape to a constant number of rows that the declared
    # input does not show: the output's first dimension becomes a number.
    inferred = session.get_outputs()[0].shape[0]
    if isinstance(inferred, int):
        found.add("fixed_batch")
    rows = torch.cat(batches)
    step = dim0.dim_value if dim0.HasField("dim_value") else inferred if isinstance(inferred, int) else len(rows)
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
        high_rows = (h.sum(dim=1) > 0)[:, None]  # the sign of the mean is the sign of the sum
        # each head's output zeroed on the rows that take the other head, then added
        return self.high(h).masked_fill(~high_rows, 0.0) + self.low(h).masked_fill(high_rows, 0.0)
# %% ch08_choose_quantization points=3 feedback=passed
_OP_TYPES = {"int8_matmul": ["MatMul", "Gemm"], "int8_all": None}


def choose_quantization(onnx_path, out_path, loader, max_accuracy_drop):
    """Pre-processed as ONNX Runtime recommends, candidates ranked by size, first within budget."""
    from onnxruntime.quantization import QuantType, quant_pre_process, quantize_dynamic

    work = Path(tempfile.mkdtemp())
    prepared = work / "prepared.onnx"
    quant_pre_process(str(onnx_path), str(prepared))
    paths = {"float": Path(onnx_path)}
    for name, op_types in _OP_TYPES.items():
        paths[name] = work / f"{name}.onnx"
        quantize_dynamic(str(prepared), str(paths[name]), weight_type=QuantType.QInt8,
                         reduce_range=True, op_types_to_quantize=op_types)
    batches = list(loader)
    labels = torch.cat([t for _, t in batches])
    accuracy = {}
    for name, path in paths.items():
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        feed = session.get_inputs()[0].name
        predicted = torch.cat([torch.from_numpy(session.run(None, {feed: x.numpy()})[0]).argmax(1)
                               for x, _ in batches])
        accuracy[name] = (predicted == labels).double().mean().item()
    report = {name: {"size_bytes": path.stat().st_size, "accuracy": accuracy[name],
                     "accuracy_drop": accuracy["float"] - accuracy[name]} for name, path in paths.items()}
    for name in sorted(report, key=lambda n: report[n]["size_bytes"]):
        if name == "float" or report[name]["accuracy_drop"] <= max_accuracy_drop:
            break
    Path(out_path).write_bytes(paths[name].read_bytes())
    return {"choice": name, "candidates": report}
