# Corpus: other correct styles: diagnose_export on a deep copy of the model, the file run with and
# without optimizations and compared in NumPy; each row's head blended with a 0/1 mask, tallies in NumPy
# and the chosen file copied by hand.
# %% ch08_diagnose_export points=4 feedback=passed
import copy


def diagnose_export(model, path, batches, atol=1e-4):
    """Behaviour only: a copy of the model in eval mode, and the file run two ways."""
    reference = copy.deepcopy(model).eval()  # the caller's model is never touched
    strict_options = ort.SessionOptions()
    strict_options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    strict = ort.InferenceSession(str(path), sess_options=strict_options, providers=["CPUExecutionProvider"])
    usual = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (inp,), outs = strict.get_inputs(), strict.get_outputs()
    report = []
    if inp.name != "images" or [o.name for o in outs] != ["logits"]:
        report.append("names")
    rows = np.concatenate([b.numpy() for b in batches])

    def takes(n):
        try:
            strict.run(None, {inp.name: rows[:n]})
        except Exception:
            return False
        return True

    sizes = [n for n in range(1, len(rows) + 1) if takes(n)]  # the file's answer, not its declaration
    if len(sizes) == 1:
        report.append("fixed_batch")
        n = sizes[0]
        chunks = [rows[i:i + n] for i in range(0, len(rows) // n * n, n)]
    else:
        chunks = [rows]
    dropping = stale = False
    for chunk in chunks:
        with torch.no_grad():
            want = reference(torch.from_numpy(chunk)).numpy()
        as_written = strict.run(None, {inp.name: chunk})[0]
        inference = usual.run(None, {inp.name: chunk})[0]
        dropping |= not np.allclose(as_written, inference, rtol=0, atol=atol)
        stale |= not np.allclose(inference, want, rtol=0, atol=atol)
    report += ["training_mode"] * dropping + ["stale_weights"] * stale
    return set(report)
# %% ch08_exportable_router points=3 feedback=passed
class ExportableRouter(Router):
    def forward(self, x):
        h = self.body(x)
        use_high = (h.mean(dim=-1) > 0).to(h.dtype).unsqueeze(-1)  # (B, 1): 1.0 or 0.0 per row
        return use_high * self.high(h) + (1 - use_high) * self.low(h)
# %% ch08_choose_quantization points=3 feedback=passed
def choose_quantization(onnx_path, out_path, loader, max_accuracy_drop):
    """NumPy tallies, candidates built in a context-managed folder, the winner copied with os."""
    import onnxruntime.quantization as oq

    with tempfile.TemporaryDirectory() as tmp:
        candidates = [("float", str(onnx_path))]
        for name, ops in (("int8_matmul", ("MatMul", "Gemm")), ("int8_all", ())):
            target = os.path.join(tmp, name + ".onnx")
            kwargs = {"op_types_to_quantize": list(ops)} if ops else {}
            oq.quantize_dynamic(model_input=str(onnx_path), model_output=target,
                                weight_type=oq.QuantType.QInt8, reduce_range=True, **kwargs)
            candidates.append((name, target))
        runners = [ort.InferenceSession(p, providers=["CPUExecutionProvider"]) for _, p in candidates]
        tallies = np.zeros(len(candidates), dtype=np.int64)
        seen = 0
        for inputs, targets in loader:
            arr, want = inputs.numpy(), targets.numpy()
            for i, runner in enumerate(runners):
                out = runner.run(None, {runner.get_inputs()[0].name: arr})[0]
                tallies[i] += np.count_nonzero(out.argmax(-1) == want)
            seen += want.shape[0]
        accs = tallies / seen
        result = {}
        for (name, p), acc in zip(candidates, accs):
            result[name] = dict(size_bytes=int(os.stat(p).st_size), accuracy=float(acc),
                                accuracy_drop=float(accs[0] - acc))
        fits = [name for name, _ in candidates
                if name == "float" or result[name]["accuracy_drop"] <= max_accuracy_drop]
        best = min(fits, key=lambda name: result[name]["size_bytes"])
        with open(dict(candidates)[best], "rb") as src, open(out_path, "wb") as dst:
            dst.write(src.read())
    return {"choice": best, "candidates": result}
