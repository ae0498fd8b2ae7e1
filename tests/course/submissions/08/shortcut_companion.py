# Corpus: every exercise handed to the companion, under other names: nothing earned, flagged.
# review: companion
# %% ch08_diagnose_export points=0 feedback="not delegated to the companion"
from companion.export import verify_onnx as _verify


def diagnose_export(model, path, batches, atol=1e-4):
    report = _verify(path, model, batches[0], batch_sizes=[len(b) for b in batches], atol=atol)
    return set() if report.passed else {"stale_weights"}
# %% ch08_exportable_router points=3 feedback=passed
class ExportableRouter(Router):
    def forward(self, x):
        h = self.body(x)
        return torch.where(h.mean(1, keepdim=True) > 0, self.high(h), self.low(h))
# %% ch08_choose_quantization points=0 feedback="not delegated to the companion"
import importlib

_inference = importlib.import_module("compan" + "ion.inference")


def choose_quantization(onnx_path, out_path, loader, max_accuracy_drop):
    quantize = getattr(_inference, "quantize_" + "onnx")
    folder = tempfile.mkdtemp()
    reports = {name: quantize(onnx_path, os.path.join(folder, name + ".onnx"), loader, op_types=ops).to_dict()
               for name, ops in (("int8_matmul", ("MatMul", "Gemm")), ("int8_all", None))}
    first = reports["int8_all"]
    candidates = {"float": {"size_bytes": first["size_bytes"], "accuracy": first["accuracy"], "accuracy_drop": 0.0}}
    for name, r in reports.items():
        candidates[name] = {"size_bytes": r["quantized_size_bytes"], "accuracy": r["quantized_accuracy"],
                            "accuracy_drop": r["accuracy"] - r["quantized_accuracy"]}
    allowed = [n for n in candidates if n == "float" or candidates[n]["accuracy_drop"] <= max_accuracy_drop]
    choice = min(allowed, key=lambda n: candidates[n]["size_bytes"])
    shutil.copy(onnx_path if choice == "float" else os.path.join(folder, choice + ".onnx"), out_path)
    return {"choice": choice, "candidates": candidates}
