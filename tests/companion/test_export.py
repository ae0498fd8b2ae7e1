"""Tests for companion/export.py: ONNX export, the control-flow error and verification."""

import tempfile
import warnings

import numpy as np
import pytest
import torch
from torch import nn

from companion.export import ExportError, VerificationError, export_onnx, verify_onnx

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


class SmallCNN(nn.Module):
    """A course-sized CNN for 1x28x28 images, with batch norm and dropout (mode matters)."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2)
        )
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.5), nn.Linear(8 * 14 * 14, 10))

    def forward(self, x):
        return self.head(self.features(x))


class Branchy(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        y = self.fc(x)
        if y.sum() > 0:  # the offending line
            return y * 2
        return -y


class FixedBatch(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(12, 2)

    def forward(self, x):
        return self.fc(x.view(4, -1))


def _cnn(seed: int = 0) -> SmallCNN:
    torch.manual_seed(seed)
    model = SmallCNN()
    with torch.no_grad():  # non-trivial running stats, so train and eval mode really differ
        model.features[1].running_mean.uniform_(-0.5, 0.5)
        model.features[1].running_var.uniform_(0.5, 2.0)
    return model


def _dims(path, index: int = 0, kind: str = "input") -> list:
    graph = onnx.load(str(path)).graph
    value = (graph.input if kind == "input" else graph.output)[index]
    return [d.dim_param or d.dim_value for d in value.type.tensor_type.shape.dim]


@pytest.fixture(scope="module")
def cnn_export(tmp_path_factory):
    model = _cnn()
    inputs = torch.randn(4, 1, 28, 28)
    path = export_onnx(model, inputs, tmp_path_factory.mktemp("cnn") / "cnn.onnx")
    return model, inputs, path


def test_export_names_inputs_and_outputs_with_a_dynamic_batch(cnn_export):
    _, _, path = cnn_export
    graph = onnx.load(str(path)).graph
    assert [i.name for i in graph.input] == ["inputs"]
    assert [o.name for o in graph.output] == ["outputs"]
    assert _dims(path) == ["batch", 1, 28, 28]
    assert _dims(path, kind="output") == ["batch", 10]


def test_small_cnn_matches_eager_at_batch_sizes_1_4_7(cnn_export):
    model, inputs, path = cnn_export
    report = verify_onnx(path, model, inputs, batch_sizes=(1, 4, 7), atol=1e-5)
    assert report.passed
    assert [c.batch_size for c in report.checks] == [1, 4, 7]
    assert [c.input_shapes for c in report.checks] == [[(b, 1, 28, 28)] for b in (1, 4, 7)]
    assert all(c.max_abs_diff < 1e-5 for c in report.checks)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (outputs,) = session.run(None, {"inputs": np.zeros((7, 1, 28, 28), np.float32)})
    assert outputs.shape == (7, 10)


@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v3_small"])
def test_torchvision_models_export_and_verify(name, tmp_path):
    torchvision = pytest.importorskip("torchvision")
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None)
    inputs = torch.randn(2, 3, 64, 64)
    path = export_onnx(model, inputs, tmp_path / f"{name}.onnx")
    report = verify_onnx(path, model, inputs, batch_sizes=(1, 4, 7))
    assert report.passed, str(report)
    assert model.training  # torchvision builds models in train mode; export must not change that


def test_export_uses_eval_mode_and_restores_each_module_mode(tmp_path):
    model = _cnn()
    model.train()
    model.features.eval()  # a mixed state that a plain model.train() afterwards would lose
    inputs = torch.randn(3, 1, 28, 28)
    path = export_onnx(model, inputs, tmp_path / "cnn.onnx")
    assert model.training and model.head.training and model.head[1].training
    assert not model.features.training and not model.features[1].training
    # Exported in eval mode: dropout off and running stats used, so ONNX equals eager eval.
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (outputs,) = session.run(None, {"inputs": inputs.numpy()})
    model.eval()
    with torch.no_grad():
        expected = model(inputs).numpy()
    np.testing.assert_allclose(outputs, expected, atol=1e-5, rtol=1e-4)


def test_example_batch_of_one_still_exports_a_dynamic_batch(tmp_path):
    model = _cnn()
    inputs = torch.randn(1, 1, 28, 28)
    path = export_onnx(model, inputs, tmp_path / "cnn.onnx")
    assert _dims(path)[0] == "batch"
    assert verify_onnx(path, model, inputs, batch_sizes=(1, 3, 8)).passed


def test_several_inputs_and_custom_names(tmp_path):
    class Pair(nn.Module):
        def forward(self, a, b):
            return a + b, a * b

    inputs = (torch.randn(2, 5), torch.randn(2, 5))
    path = export_onnx(
        Pair(), inputs, tmp_path / "pair.onnx", input_names=["a", "b"], output_names=["s", "p"]
    )
    graph = onnx.load(str(path)).graph
    assert [i.name for i in graph.input] == ["a", "b"]
    assert [o.name for o in graph.output] == ["s", "p"]
    assert verify_onnx(path, Pair(), inputs).passed


def test_fixed_batch_export_fails_verification_at_other_sizes(tmp_path):
    model = _cnn()
    inputs = torch.randn(2, 1, 28, 28)
    path = export_onnx(model, inputs, tmp_path / "fixed.onnx", dynamic_batch=False)
    assert _dims(path)[0] == 2
    assert verify_onnx(path, model, inputs, batch_sizes=(2,)).passed
    with pytest.raises(VerificationError) as info:
        verify_onnx(path, model, inputs, batch_sizes=(2, 3))
    checks = info.value.report.checks
    assert checks[0].passed and not checks[1].passed
    assert "dynamic_batch=False" in checks[1].error


def test_code_that_fixes_the_batch_size_is_reported(tmp_path):
    with pytest.raises(ExportError, match=r"fixed the batch size .* to 4.*x\.flatten\(1\)"):
        export_onnx(FixedBatch(), torch.randn(4, 3, 4), tmp_path / "fixed.onnx")
    path = export_onnx(
        FixedBatch(), torch.randn(4, 3, 4), tmp_path / "ok.onnx", dynamic_batch=False
    )
    assert _dims(path)[0] == 4


def test_legacy_exporter_matches_and_raises_no_warning_of_ours(tmp_path):
    model = _cnn()
    inputs = torch.randn(2, 1, 28, 28)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        path = export_onnx(model, inputs, tmp_path / "legacy.onnx", legacy=True)
    assert not [w for w in caught if issubclass(w.category, DeprecationWarning | FutureWarning)]
    assert _dims(path)[0] == "batch"
    assert verify_onnx(path, model, inputs, batch_sizes=(1, 5)).passed


def test_legacy_exporter_silently_keeps_one_branch(tmp_path):
    torch.manual_seed(0)
    model = Branchy()
    positive = torch.ones(2, 4)
    with torch.no_grad():
        model.fc.weight.fill_(0.1)
        model.fc.bias.zero_()
    with pytest.warns(torch.jit.TracerWarning):
        path = export_onnx(model, positive, tmp_path / "branchy.onnx", legacy=True)
    assert verify_onnx(path, model, positive).passed
    with pytest.raises(VerificationError):  # the other branch was never recorded
        verify_onnx(path, model, -positive)


def test_data_dependent_control_flow_names_the_line_and_the_fixes(tmp_path):
    with pytest.raises(ExportError) as info:
        export_onnx(Branchy(), torch.randn(2, 4), tmp_path / "branchy.onnx")
    error = info.value
    message = str(error)
    assert error.data_dependent
    assert "torch.where" in message and "torch.cond" in message
    assert "if y.sum() > 0:" in message and __file__ in message
    assert error.location[0] == __file__ and error.location[2].startswith("if y.sum() > 0:")
    assert isinstance(error.__cause__, Exception)


def test_item_based_decision_is_also_explained(tmp_path):
    class Rescale(nn.Module):
        def forward(self, x):
            scale = x.abs().max().item()
            return x / scale if scale > 1.0 else x  # the offending line

    with pytest.raises(ExportError, match="torch.where") as info:
        export_onnx(Rescale(), torch.randn(2, 3), tmp_path / "rescale.onnx")
    assert info.value.data_dependent
    assert "the offending line" in info.value.location[2]


def test_other_export_failures_keep_the_exporters_message_and_add_tips(tmp_path):
    class Unsupported(nn.Module):
        def forward(self, x):
            return torch.linalg.eig(x)[0].real

    with pytest.raises(ExportError) as info:
        export_onnx(Unsupported(), torch.randn(2, 3, 3), tmp_path / "eig.onnx")
    message = str(info.value)
    assert not info.value.data_dependent
    assert "linalg_eig" in message  # the exporter's own words
    assert "What to try" in message


def test_verification_catches_a_file_from_another_model(tmp_path, cnn_export):
    _, inputs, path = cnn_export
    other = _cnn(seed=1)  # same architecture, different weights
    with pytest.raises(VerificationError) as info:
        verify_onnx(path, other, inputs)
    report = info.value.report
    assert not report.passed and not any(c.passed for c in report.checks)
    assert all(c.max_abs_diff > 1e-3 for c in report.checks)
    assert "FAIL" in str(report) and "FAIL" in str(info.value)


def test_verification_catches_weights_changed_after_export(tmp_path):
    model = _cnn()
    inputs = torch.randn(2, 1, 28, 28)
    path = export_onnx(model, inputs, tmp_path / "cnn.onnx")
    with torch.no_grad():
        model.head[2].bias.add_(0.01)
    with pytest.raises(VerificationError):
        verify_onnx(path, model, inputs)


def test_verification_report_prints_and_converts(cnn_export):
    model, inputs, path = cnn_export
    report = verify_onnx(path, model, inputs, batch_sizes=(1, 2))
    text = str(report)
    assert "PASSED" in text and "max abs diff" in text and "1x1x28x28" in text
    assert "<table>" in report._repr_html_()
    data = report.to_dict()
    assert data["passed"] is True and data["checker"] == "passed"
    assert [c["batch_size"] for c in data["checks"]] == [1, 2]


def test_checker_failure_is_reported(tmp_path, cnn_export):
    model, inputs, path = cnn_export
    broken = onnx.load(str(path))
    broken.graph.node[0].op_type = "NoSuchOperator"
    bad_path = tmp_path / "broken.onnx"
    onnx.save(broken, str(bad_path))
    with pytest.raises(VerificationError) as info:
        verify_onnx(bad_path, model, inputs, batch_sizes=(1,))
    assert info.value.report.checker != "passed"


def test_argument_errors(tmp_path):
    with pytest.raises(TypeError, match="model must be a torch.nn.Module"):
        export_onnx(lambda x: x, torch.randn(1, 2), tmp_path / "a.onnx")
    with pytest.raises(TypeError, match=r"example_inputs\[1\] must be a torch.Tensor"):
        export_onnx(nn.Identity(), (torch.randn(1, 2), 3), tmp_path / "a.onnx")
    with pytest.raises(ValueError, match="share its first dimension"):
        export_onnx(nn.Identity(), (torch.randn(2, 2), torch.randn(3, 2)), tmp_path / "a.onnx")
    with pytest.raises(ValueError, match="input_names must be 1 strings"):
        export_onnx(nn.Identity(), torch.randn(2, 2), tmp_path / "a.onnx", input_names=["a", "b"])
    with pytest.raises(ValueError, match="model.*failed on shapes"):
        export_onnx(nn.Linear(3, 2), torch.randn(2, 5), tmp_path / "a.onnx")
    with pytest.raises(ValueError, match=r"model has tensors on \['meta'\].*model.cpu\(\)"):
        export_onnx(nn.Linear(2, 2, device="meta"), torch.randn(1, 2), tmp_path / "a.onnx")
    with pytest.raises(FileNotFoundError, match="run export_onnx first"):
        verify_onnx(tmp_path / "missing.onnx", nn.Identity(), torch.randn(1, 2))
    with pytest.raises(ValueError, match="batch_sizes must be positive"):
        verify_onnx(tmp_path / "missing.onnx", nn.Identity(), torch.randn(1, 2), batch_sizes=(0,))


def test_export_to_a_folder_or_a_read_only_place_says_so_before_exporting(tmp_path, monkeypatch):
    model = nn.Linear(4, 2)
    with pytest.raises(IsADirectoryError, match="is a folder; pass a file name such as"):
        export_onnx(model, torch.randn(2, 4), tmp_path)
    blocker = tmp_path / "out"
    blocker.write_text("a file where the folder should be")
    with pytest.raises(OSError, match="path: cannot write in .*out.*choose a writable folder"):
        export_onnx(model, torch.randn(2, 4), blocker / "m.onnx")
    exported = []
    monkeypatch.setattr(torch.onnx, "export", lambda *a, **k: exported.append(a))
    read_only = tmp_path / "ro"
    read_only.mkdir()
    monkeypatch.setattr(
        tempfile, "TemporaryFile", lambda **k: (_ for _ in ()).throw(PermissionError(13, "denied"))
    )
    with pytest.raises(PermissionError, match="path: cannot write in .*ro"):
        export_onnx(model, torch.randn(2, 4), read_only / "m.onnx")
    assert exported == []  # nothing was exported before the path was found unwritable
