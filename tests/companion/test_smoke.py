"""Tests for companion/smoke.py: the 16-sample smoke test."""

import matplotlib
import pytest
import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import Dataset, TensorDataset

from companion.smoke import STAGES, SmokeTestError, smoke_test

matplotlib.use("Agg")


def _data(n=64, features=8, classes=4, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(n, features, generator=gen), torch.randint(0, classes, (n,), generator=gen)


def _mlp(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 4))


def _statuses(report):
    return {s.stage: s.status for s in report.stages}


def test_a_working_model_passes_every_stage():
    model = _mlp()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    report = smoke_test(model, _data(), optimizer, nn.CrossEntropyLoss())
    assert report.ok, str(report)
    assert [s.stage for s in report.stages] == list(STAGES)
    assert report.n == 16 and report.device == "cpu" and report.failed is None
    assert "16 samples" in report["data"].detail
    assert "accuracy 100%" in report["overfit"].detail
    assert "outputs identical after reload" in report["checkpoint"].detail
    assert 0 < len(report.losses) <= 200 and report.losses[-1] < report.losses[0]
    assert all(s.seconds >= 0 for s in report.stages)
    assert report.raise_if_failed() is report


def test_the_model_and_optimizer_are_put_back():
    model = _mlp()
    model.eval()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    rng = torch.get_rng_state()
    assert smoke_test(model, _data(), optimizer, nn.CrossEntropyLoss()).ok
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert optimizer.state_dict()["state"] == {}
    assert not model.training and all(p.grad is None for p in model.parameters())
    assert torch.equal(torch.get_rng_state(), rng)

    # restore=False keeps what the 16 samples taught it
    smoke_test(model, _data(), optimizer, nn.CrossEntropyLoss(), restore=False)
    assert not torch.equal(before["0.weight"], model.state_dict()["0.weight"])
    assert optimizer.state_dict()["state"]


def test_a_broken_forward_fails_at_forward_with_the_error():
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(30, 4))  # wrong in_features
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    report = smoke_test(model, _data(), optimizer, nn.CrossEntropyLoss())
    assert not report.ok and report.failed.stage == "forward"
    assert "mat1 and mat2 shapes cannot be multiplied" in report["forward"].detail
    assert "trace_shapes" in report["forward"].detail
    assert isinstance(report["forward"].error, RuntimeError)
    after = [s.status for s in report.stages[2:]]
    assert after == ["SKIP"] * len(after)
    assert "FAILED at forward" in str(report).splitlines()[0]


def test_a_detached_loss_fails_at_backward():
    model = _mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def detached_loss(outputs, targets):
        return F.cross_entropy(outputs, targets).detach()  # the bug

    report = smoke_test(model, _data(), optimizer, detached_loss)
    assert report.failed.stage == "backward"
    assert "no parameter received a gradient" in report["backward"].detail
    assert "is the loss detached?" in report["backward"].detail
    assert _statuses(report)["step"] == "SKIP" and _statuses(report)["overfit"] == "SKIP"


def test_a_model_that_cannot_learn_fails_overfit():
    model = _mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
    report = smoke_test(model, _data(), optimizer, nn.CrossEntropyLoss(), steps=30)
    statuses = _statuses(report)
    assert statuses["overfit"] == "FAIL"
    assert statuses["step"] == "FAIL" and "lr=0" in report["step"].detail
    detail = report["overfit"].detail
    assert "loss went from" in detail and "in 30 steps" in detail
    assert "learning rate too low (lr=0)" in detail and "cannot fit" in detail
    assert len(report.losses) == 30
    with pytest.raises(SmokeTestError) as info:
        report.raise_if_failed()
    assert info.value.report is report


def test_an_exploding_learning_rate_is_named():
    model = _mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e6)
    report = smoke_test(model, _data(), optimizer, nn.CrossEntropyLoss(), steps=20)
    assert not report.ok
    assert "too high" in (report["step"].detail + report["overfit"].detail)


def test_regression_passes_on_the_loss_ratio():
    torch.manual_seed(0)
    x = torch.randn(32, 4)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5], [3.0]]) + 0.5
    model = nn.Linear(4, 1)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    report = smoke_test(model, (x, y), optimizer, nn.MSELoss(), steps=300)
    assert report.ok, str(report)
    assert "accuracy" not in report["overfit"].detail


def test_loss_stage_explains_a_non_scalar_loss():
    model = _mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    report = smoke_test(model, _data(), optimizer, nn.CrossEntropyLoss(reduction="none"))
    assert report.failed.stage == "loss"
    assert "(16,)" in report["loss"].detail and "reduction='mean'" in report["loss"].detail


def test_an_optimizer_over_another_model_fails_step():
    model = _mlp()
    optimizer = torch.optim.SGD(_mlp(1).parameters(), lr=0.1)  # built for another model
    report = smoke_test(model, _data(), optimizer, nn.CrossEntropyLoss())
    assert report.failed.stage == "step"
    assert "holds none of the model's parameters" in report["step"].detail
    assert _statuses(report)["overfit"] == "SKIP"


def test_state_outside_the_state_dict_fails_checkpoint():
    class Drifting(nn.Module):
        """Keeps a running value in a plain attribute: lost by save/load."""

        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 4)
            self.shift = torch.zeros(4)

        def forward(self, x):
            if self.training:
                self.shift = self.shift + 0.0
            out = self.fc(x) + self.shift
            self.shift = self.shift + 1.0  # changes with every call, never saved
            return out

    model = Drifting()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    report = smoke_test(model, _data(), optimizer, nn.CrossEntropyLoss(), steps=5)
    assert _statuses(report)["checkpoint"] == "FAIL"
    assert "register_buffer" in report["checkpoint"].detail


def test_a_dataset_class_batch_size_and_fewer_samples_than_n():
    class Pairs(Dataset):
        def __init__(self):
            self.x, self.y = _data(n=10)

        def __len__(self):
            return len(self.y)

        def __getitem__(self, i):
            return self.x[i], self.y[i]

    model = _mlp()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    report = smoke_test(model, Pairs(), optimizer, nn.CrossEntropyLoss(), batch_size=4)
    assert report.ok, str(report)
    assert report.n == 10 and "the dataset has only 10" in report["data"].detail


def test_a_dataset_that_does_not_return_pairs_fails_data():
    class Bare(Dataset):
        def __len__(self):
            return 20

        def __getitem__(self, i):
            return torch.zeros(8)

    report = smoke_test(_mlp(), Bare(), torch.optim.SGD(_mlp().parameters()), nn.CrossEntropyLoss())
    assert report.failed.stage == "data" and "(input, target)" in report["data"].detail


def test_report_prints_converts_and_plots():
    model = _mlp()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    report = smoke_test(model, _data(), optimizer, nn.CrossEntropyLoss())
    text = str(report)
    assert text.splitlines()[0].startswith("Smoke test on 16 samples (cpu): PASSED")
    assert all(f"PASS  {stage}" in text for stage in STAGES)
    data = report.to_dict()
    assert data["ok"] is True and [s["stage"] for s in data["stages"]] == list(STAGES)
    assert "<table>" in report._repr_html_()
    assert report.plot().get_ylabel() == "training loss"
    with pytest.raises(KeyError, match="stages are"):
        report["nope"]


def test_argument_errors():
    model, data, loss_fn = _mlp(), _data(), nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(TypeError, match="nn.Module"):
        smoke_test(lambda x: x, data, optimizer, loss_fn)
    with pytest.raises(TypeError, match="Dataset"):
        smoke_test(model, 42, optimizer, loss_fn)
    with pytest.raises(TypeError, match="torch.optim.Optimizer"):
        smoke_test(model, data, "adam", loss_fn)
    with pytest.raises(TypeError, match="loss_fn"):
        smoke_test(model, data, optimizer, "mse")
    with pytest.raises(ValueError, match="n must be a positive int"):
        smoke_test(model, data, optimizer, loss_fn, n=0)
    with pytest.raises(ValueError, match="loss_ratio"):
        smoke_test(model, data, optimizer, loss_fn, loss_ratio=1)


@pytest.mark.requires_cuda
def test_smoke_test_on_cuda():
    model = _mlp().cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    report = smoke_test(model, _data(), optimizer, nn.CrossEntropyLoss())
    assert report.ok and report.device.startswith("cuda"), str(report)


def test_a_model_with_fewer_outputs_than_classes_is_named_as_such():
    # the user's mistake: nn.Linear(8, 3) for a 10-class problem (it used to blame argument order)
    ds = TensorDataset(torch.randn(64, 8), torch.arange(64) % 10)
    model = nn.Linear(8, 3)
    report = smoke_test(model, ds, torch.optim.SGD(model.parameters(), 0.1), nn.CrossEntropyLoss())
    detail = report["loss"].detail
    assert report["loss"].status == "FAIL"
    assert "class indices up to 9, but the model gives 3 scores per sample" in detail
    assert "in that order" not in detail


def test_the_old_argument_order_gets_a_clear_error_and_keywords_work_in_any_order():
    model, data, loss_fn = _mlp(), _data(), nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    with pytest.raises(TypeError, match=r"takes \(model, data, optimizer, loss_fn\).*Swap them"):
        smoke_test(model, data, loss_fn, optimizer)  # the order before issue 17
    assert smoke_test(model, data, loss_fn=loss_fn, optimizer=optimizer, steps=50).n == 16
    report = smoke_test(model, data, optimizer, loss_fn, steps=50)
    assert report.device == "cpu"  # device="auto": where the model is
