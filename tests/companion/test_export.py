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


# --- sequences: dynamic axes besides the batch, verification over a loader ---------------


class MaskedConv(nn.Module):
    """A 1-D signal classifier over padded batches: (B, 1, T) and a (B, T) mask of real steps."""

    def __init__(self, branch_on_padding: bool = False) -> None:
        super().__init__()
        self.conv = nn.Conv1d(1, 8, 5, padding=2)
        self.head = nn.Linear(8, 3)
        self.branch_on_padding = branch_on_padding

    def forward(self, x, mask):
        hidden = torch.relu(self.conv(x))  # (B, 8, T)
        if self.branch_on_padding and not bool((mask == 0).any()):  # legacy keeps one branch
            return self.head(hidden.sum(-1) / mask.sum(-1, keepdim=True))  # right without padding
        pooled = (hidden * mask[:, None]).sum(-1) / mask.sum(-1, keepdim=True)  # (B, 8)
        return self.head(pooled)


class WithGRU(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gru = nn.GRU(1, 8, batch_first=True)
        self.head = nn.Linear(8, 3)

    def forward(self, x, mask):  # x (B, 1, T)
        hidden, _ = self.gru(x.transpose(1, 2))  # (B, T, 8)
        return self.head((hidden * mask[..., None]).sum(1) / mask.sum(1, keepdim=True))


def _padded_batches(lengths, batch_size=4, seed=0):
    """(x, mask), targets batches padded to each of ``lengths``, every row of its own length."""
    g = torch.Generator().manual_seed(seed)
    for length in lengths:
        x = torch.randn(batch_size, 1, length, generator=g)
        real = torch.randint(1, length + 1, (batch_size,), generator=g)
        mask = (torch.arange(length) < real[:, None]).float()
        yield (x * mask[:, None], mask), torch.randint(0, 3, (batch_size,), generator=g)


def _seq_example(length=40):
    return torch.randn(2, 1, length), torch.ones(2, length)


def test_a_declared_sequence_axis_is_dynamic_and_shared_by_the_mask(tmp_path):
    torch.manual_seed(0)
    model = MaskedConv()
    time = torch.export.Dim("time", min=2, max=4096)
    path = export_onnx(model, _seq_example(), tmp_path / "seq.onnx",
                       dynamic_shapes={"x": {2: time}, "mask": {1: time}})  # fmt: skip
    assert _dims(path, 0) == ["batch", 1, "time"] and _dims(path, 1) == ["batch", "time"]
    batch, _ = next(_padded_batches([160]))
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (got,) = session.run(None, {"inputs_0": batch[0].numpy(), "inputs_1": batch[1].numpy()})
    with torch.no_grad():
        np.testing.assert_allclose(got, model.eval()(*batch).numpy(), atol=1e-5, rtol=1e-4)


def test_dynamic_shapes_as_a_tuple_and_without_the_batch(tmp_path):
    model = MaskedConv()
    time = torch.export.Dim("time", min=2, max=4096)
    path = export_onnx(model, _seq_example(), tmp_path / "seq.onnx", dynamic_batch=False,
                       dynamic_shapes=({2: time}, {-1: time}))  # fmt: skip
    assert _dims(path, 0) == [2, 1, "time"] and _dims(path, 1) == [2, "time"]


def test_verify_tries_every_dynamic_axis_at_several_sizes(tmp_path):
    model = MaskedConv()
    time = torch.export.Dim("time", min=2, max=4096)
    example = _seq_example(40)
    path = export_onnx(model, example, tmp_path / "seq.onnx",
                       dynamic_shapes={"x": {2: time}, "mask": {1: time}})  # fmt: skip
    report = verify_onnx(path, model, example, batch_sizes=(1, 3))
    assert [c.sizes for c in report.checks] == [
        {"batch": 1, "time": 40}, {"batch": 3, "time": 40}, {"batch": 2, "time": 20},
        {"batch": 2, "time": 80}, {"batch": 3, "time": 80},
    ]  # fmt: skip
    assert report.checks[3].input_shapes == [(2, 1, 80), (2, 80)]
    assert "batch=3 time=80" in str(report)
    chosen = verify_onnx(path, model, example, batch_sizes=(2,), sizes={"time": (7, 333)})
    assert [c.sizes["time"] for c in chosen.checks] == [40, 7, 333]
    with pytest.raises(ValueError, match=r"'width'.*not a dynamic axis.*\['time'\]"):
        verify_onnx(path, model, example, sizes={"width": (3,)})
    with pytest.raises(ValueError, match=r"sizes\['batch'\].*batch_sizes="):
        verify_onnx(path, model, example, sizes={"batch": (3,)})
    with pytest.raises(ValueError, match=r"sizes\['time'\] must be positive ints, got \(0,\)"):
        verify_onnx(path, model, example, sizes={"time": (0,)})


def test_a_file_fixed_at_one_length_fails_on_a_loader_of_other_lengths(tmp_path):
    model = MaskedConv()
    path = export_onnx(model, _seq_example(40), tmp_path / "fixed.onnx")  # batch dynamic only
    assert verify_onnx(path, model, _seq_example(40)).passed  # the example's length alone passes
    with pytest.raises(VerificationError) as info:
        verify_onnx(path, model, loader=list(_padded_batches([40, 160, 40])))
    check = info.value.report.loader
    assert not check.passed and check.worst_batch == 2
    assert "batch 2 (4x1x160, 4x160)" in check.error and "ONNX Runtime failed" in check.error
    assert "fixes axis 2 of 'inputs_0' to 40, this batch has 160" in check.error
    assert "dynamic_shapes" in check.error


def test_verify_over_a_loader_reports_the_worst_difference(tmp_path):
    torch.manual_seed(0)
    model = MaskedConv(branch_on_padding=True)
    example = _seq_example(40)  # no padding: the traced branch ignores the mask
    time = torch.export.Dim("time", min=2, max=4096)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        path = export_onnx(model, example, tmp_path / "seq.onnx", legacy=True,
                           dynamic_shapes={"x": {2: time}, "mask": {1: time}})  # fmt: skip
    assert verify_onnx(path, model, example).passed  # synthetic sizes cannot see it
    batches = [({"signal": x, "mask": m}, y) for (x, m), y in _padded_batches([40, 64, 24])]
    with pytest.raises(VerificationError) as info:
        verify_onnx(path, model, loader=batches,
                    batch_fn=lambda b: ((b[0]["signal"], b[0]["mask"]), b[1]))  # fmt: skip
    check = info.value.report.loader
    assert (check.batches, check.samples) == (3, 12) and not check.passed
    per_batch = []
    for (x, m), _ in _padded_batches([40, 64, 24]):
        with torch.no_grad():
            right = model.eval()(x, m)
            traced = model.head(torch.relu(model.conv(x)).sum(-1) / m.sum(-1, keepdim=True))
        per_batch.append((right - traced).abs().max().item())
    assert check.max_abs_diff == pytest.approx(max(per_batch), rel=1e-4)
    assert check.worst_batch == 1 + per_batch.index(max(per_batch))
    assert "loader: 3 batches, 12 samples" in str(info.value.report)


def test_a_correct_sequence_export_passes_over_a_loader(tmp_path):
    torch.manual_seed(0)
    model = MaskedConv()
    time = torch.export.Dim("time", min=2, max=4096)
    path = export_onnx(model, _seq_example(), tmp_path / "seq.onnx",
                       dynamic_shapes={"x": {2: time}, "mask": {1: time}})  # fmt: skip
    report = verify_onnx(path, model, loader=list(_padded_batches([40, 160, 7, 33])))
    assert report.passed and report.checks == [] and report.loader.batches == 4
    assert report.loader.max_abs_diff < 1e-5
    assert report.to_dict()["loader"]["samples"] == 16


def test_a_declared_axis_the_model_fixes_is_never_left_silently_fixed(tmp_path):
    class FlatHead(nn.Module):  # a Linear over the flattened (channels x 40 steps)
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv1d(1, 8, 5, padding=2)
            self.head = nn.Linear(8 * 40, 3)

        def forward(self, x, mask):
            return self.head((self.conv(x) * mask[:, None]).flatten(1))

    time = torch.export.Dim("time", min=2, max=4096)
    with pytest.raises(ExportError, match=r"(?s)'time'\) fixed to 40.*x\.shape\[2\]"):
        export_onnx(FlatHead(), _seq_example(), tmp_path / "flat.onnx",
                    dynamic_shapes={"x": {2: time}, "mask": {1: time}})  # fmt: skip


@pytest.mark.parametrize(
    ("shapes", "error", "match"),
    [
        ({"signal": {2: torch.export.Dim("t")}}, ValueError, r"keys \['signal'\].*\['x', 'mask'\]"),
        (({2: torch.export.Dim("t")},), ValueError, "has 1 entries but example_inputs has 2"),
        (({3: torch.export.Dim("t")}, None), ValueError, r"axis 3 does not exist.*\(2, 1, 40\)"),
        (({2: "time"}, None), TypeError, r"dynamic_shapes\['x'\]\[2\] must be a torch.export.Dim"),
        (({2: torch.export.Dim("t")}, [1]), TypeError, r"dynamic_shapes\['mask'\] must be a dict"),
        ("time", TypeError, "dynamic_shapes must be a dict keyed by forward's parameter names"),
    ],
)
def test_dynamic_shapes_errors_name_the_entry(shapes, error, match, tmp_path):
    with pytest.raises(error, match=match):
        export_onnx(MaskedConv(), _seq_example(), tmp_path / "m.onnx", dynamic_shapes=shapes)


def test_verify_needs_inputs_or_a_loader(tmp_path, cnn_export):
    model, inputs, path = cnn_export
    with pytest.raises(TypeError, match="needs example_inputs.*loader=.*neither"):
        verify_onnx(path, model)
    with pytest.raises(ValueError, match="loader yielded no batches"):
        verify_onnx(path, model, loader=iter([]))
    with pytest.raises(TypeError, match=r"sizes=\.\.\. resizes example_inputs"):
        verify_onnx(path, model, loader=[inputs], sizes={"time": (3,)})


@pytest.mark.parametrize("action", ["error"])
def test_export_and_verify_say_nothing_that_the_model_cannot_act_on(
    action, tmp_path, monkeypatch, capfd
):
    """No Python warning, and no torchvision lines in a lean install (torchvision hidden).

    "error" is python -W error (pytest's filterwarnings=error): any warning of ours fails, and
    so does torch's own way of hiding a warning while it traces a recurrent layer. ("always",
    which records every warning instead, passes too: about a minute more of CI, so run it by
    hand when changing the filters.)
    """
    import importlib.util

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "torchvision" else find_spec(name, *a))  # fmt: skip
    time = torch.export.Dim("time", min=2, max=4096)
    length = {"x": {2: time}, "mask": {1: time}}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter(action)
        for name, model, shapes in [("conv", MaskedConv(), length), ("gru", WithGRU(), None),
                                    ("gru_t", WithGRU(), length)]:  # fmt: skip
            path = export_onnx(model, _seq_example(), tmp_path / f"{name}.onnx",
                               dynamic_shapes=shapes)  # fmt: skip
            verify_onnx(path, model, _seq_example(), loader=list(_padded_batches([40])))
    said = [f"{w.category.__name__}: {w.message} ({w.filename}:{w.lineno})" for w in caught]
    assert said == [], "\n".join(said)
    stderr = capfd.readouterr().err
    assert "torchvision" not in stderr, stderr


class Recurrent(nn.Module):
    def __init__(self, kind: str) -> None:
        super().__init__()
        self.rnn = getattr(nn, kind)(1, 8, batch_first=True)
        self.head = nn.Linear(8, 3)

    def forward(self, x, mask):  # x (B, 1, T), mask (B, T)
        hidden, _ = self.rnn(x.transpose(1, 2))  # (B, T, 8)
        return self.head((hidden * mask[..., None]).sum(1) / mask.sum(1, keepdim=True))


@pytest.mark.parametrize("kind", ["GRU", "LSTM"])
def test_a_recurrent_length_stays_dynamic_export_after_export(kind, tmp_path):
    """torch caches what a first export traced; a second one (a cell run again) must not reuse it."""
    torch.manual_seed(0)
    model = Recurrent(kind)
    time = torch.export.Dim("time", min=2, max=4096)
    (x, mask), _ = next(_padded_batches([160]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # python -W error exports recurrent layers too
        fixed = export_onnx(model, _seq_example(), tmp_path / "fixed.onnx")
        assert _dims(fixed, 0) == ["batch", 1, 40]
        for attempt in range(2):
            path = export_onnx(model, _seq_example(), tmp_path / f"seq{attempt}.onnx",
                               dynamic_shapes={"x": {2: time}, "mask": {1: time}})  # fmt: skip
            assert _dims(path, 0) == ["batch", 1, "time"], attempt
            session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
            (got,) = session.run(None, {"inputs_0": x.numpy(), "inputs_1": mask.numpy()})
            with torch.no_grad():
                np.testing.assert_allclose(got, model.eval()(x, mask).numpy(), atol=1e-5, rtol=1e-4)


def test_a_plain_rnn_length_is_named_and_legacy_keeps_it_dynamic(tmp_path):
    torch.manual_seed(0)
    model = Recurrent("RNN")
    time = torch.export.Dim("time", min=2, max=4096)
    shapes = {"x": {2: time}, "mask": {1: time}}
    with pytest.raises(ExportError, match=r"(?s)the RNN does:.*unrolls nn\.RNN.*legacy=True"):
        export_onnx(model, _seq_example(), tmp_path / "rnn.onnx", dynamic_shapes=shapes)
    with warnings.catch_warnings():
        warnings.simplefilter(
            "error"
        )  # torch's own size checks and blanket notices are ours to hush
        path = export_onnx(model, _seq_example(), tmp_path / "legacy.onnx", legacy=True,
                           dynamic_shapes=shapes)  # fmt: skip
        report = verify_onnx(path, model, loader=list(_padded_batches([40, 160, 7])))
    assert report.passed and report.loader.batches == 3
