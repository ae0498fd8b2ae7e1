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
        return torch.where(h.mean() > 0, self.high(h), self.low(h))
# %% ch08_quantize_and_report points=0 feedback="not delegated to the companion"
import importlib

_inference = importlib.import_module("compan" + "ion.inference")


def quantize_and_report(onnx_path, out_path, loader):
    report = getattr(_inference, "quantize_" + "onnx")(onnx_path, out_path, loader).to_dict()
    keys = ("size_bytes", "quantized_size_bytes", "size_ratio", "accuracy", "quantized_accuracy",
            "accuracy_change", "speed_ratio")
    return {k: report[k] for k in keys}
