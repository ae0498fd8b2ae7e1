"""Tests for companion/loop.py: train_one_epoch, evaluate and fit."""

import copy
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from torch import nn
from torch.testing import assert_close
from torch.utils.data import DataLoader, TensorDataset

import companion
from companion import NonFiniteLossError, evaluate, fit, train_one_epoch

HERE = Path(__file__).parent


def make_data(n=48, features=6, classes=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    inputs = torch.randn(n, features, generator=g)
    targets = torch.randint(0, classes, (n,), generator=g)
    return inputs, targets


def make_model(features=6, classes=3, dropout=0.0, seed=0):
    torch.manual_seed(seed)
    layers = [nn.Linear(features, 16), nn.ReLU()]
    if dropout:
        layers.append(nn.Dropout(dropout))
    return nn.Sequential(*layers, nn.Linear(16, classes))


def loader_of(inputs, targets, batch_size, shuffle=False):
    return DataLoader(TensorDataset(inputs, targets), batch_size=batch_size, shuffle=shuffle)


def hand_written_epoch(model, loader, optimizer, loss_fn):
    model.train()
    total, count = 0.0, 0
    for inputs, targets in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(targets)
        count += len(targets)
    return total / count


# --- train_one_epoch -----------------------------------------------------------------------


def test_train_one_epoch_matches_a_hand_written_loop():
    inputs, targets = make_data()
    ours, theirs = make_model(), make_model()
    opt_a = torch.optim.SGD(ours.parameters(), lr=0.1, momentum=0.9)
    opt_b = torch.optim.SGD(theirs.parameters(), lr=0.1, momentum=0.9)
    loader = loader_of(inputs, targets, 8)
    for _ in range(2):  # two epochs: gradients left over would show
        loss_a = train_one_epoch(ours, loader, opt_a, nn.CrossEntropyLoss(), device="cpu")
        loss_b = hand_written_epoch(theirs, loader, opt_b, nn.CrossEntropyLoss())
    assert loss_a == pytest.approx(loss_b, rel=1e-6)
    for a, b in zip(ours.parameters(), theirs.parameters()):
        assert_close(a, b)


def test_train_one_epoch_returns_the_sample_weighted_mean_loss():
    inputs, targets = make_data(n=20)
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)  # lr 0: losses stay put
    loss = train_one_epoch(
        model, loader_of(inputs, targets, 8), optimizer, nn.CrossEntropyLoss(), device="cpu"
    )
    with torch.no_grad():
        expected = nn.CrossEntropyLoss()(model(inputs), targets).item()
    assert loss == pytest.approx(expected, rel=1e-5)  # batches of 8, 8, 4


def test_train_one_epoch_puts_the_model_in_train_mode():
    inputs, targets = make_data()
    model = make_model(dropout=0.5).eval()
    seen = []
    model[2].register_forward_hook(lambda m, i, o: seen.append(m.training))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_one_epoch(
        model, loader_of(inputs, targets, 16), optimizer, nn.CrossEntropyLoss(), device="cpu"
    )
    assert seen and all(seen)


@pytest.mark.parametrize("n", [64, 40, 42])  # whole groups; a short last group; a short last batch
def test_accumulation_equals_one_large_batch(n):
    inputs, targets = make_data(n=n)
    small, large = make_model(), make_model()
    opt_small = torch.optim.SGD(small.parameters(), lr=0.5)
    opt_large = torch.optim.SGD(large.parameters(), lr=0.5)
    loss_small = train_one_epoch(
        small, loader_of(inputs, targets, 4), opt_small, nn.CrossEntropyLoss(), device="cpu",
        accumulate=4,
    )  # fmt: skip
    loss_large = train_one_epoch(
        large, loader_of(inputs, targets, 16), opt_large, nn.CrossEntropyLoss(), device="cpu"
    )
    for a, b in zip(small.parameters(), large.parameters()):
        assert_close(a, b, rtol=1e-5, atol=1e-6)
    assert loss_small == pytest.approx(loss_large, rel=1e-5)


def _descends(amp, **kwargs):
    inputs, _ = make_data(n=64)
    targets = inputs[:, :3].argmax(dim=1)  # learnable
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.2)
    loader = loader_of(inputs, targets, 16)
    losses = [
        train_one_epoch(
            model, loader, optimizer, nn.CrossEntropyLoss(), device="cpu", amp=amp, **kwargs
        )
        for _ in range(15)
    ]
    return losses


def test_bf16_trains_on_cpu_without_a_scaler():
    losses = _descends("bf16")
    assert losses[-1] < 0.8 * losses[0]


def test_fp16_trains_on_cpu_with_a_scaler():
    scaler = companion.make_scaler("cpu", "fp16")
    losses = _descends("fp16", scaler=scaler)
    assert losses[-1] < 0.8 * losses[0]
    assert scaler.get_scale() > 0


def test_autocast_wraps_the_forward_pass():
    inputs, targets = make_data(n=16)
    model = make_model()
    dtypes = []
    model[0].register_forward_hook(lambda m, i, o: dtypes.append(o.dtype))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_one_epoch(
        model,
        loader_of(inputs, targets, 16),
        optimizer,
        nn.CrossEntropyLoss(),
        device="cpu",
        amp="bf16",
    )
    assert dtypes == [torch.bfloat16]
    assert model[0].weight.dtype == torch.float32  # master weights stay fp32


def test_autocast_is_entered_for_every_micro_batch_and_left_after_each():
    # one autocast context serves the whole epoch: it must be entered again for each
    # micro-batch, and backward() and the step must run outside it
    inputs, targets = make_data(n=16)
    model = make_model()
    dtypes, inside = [], []
    model[0].register_forward_hook(lambda m, i, o: dtypes.append(o.dtype))
    model[-1].register_full_backward_hook(
        lambda m, gi, go: inside.append(torch.is_autocast_enabled("cpu"))
    )
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_one_epoch(model, loader_of(inputs, targets, 3), optimizer, nn.CrossEntropyLoss(),
                    device="cpu", amp="bf16", accumulate=2)  # fmt: skip
    assert dtypes == [torch.bfloat16] * 6  # 6 micro-batches, the last one partial
    assert inside == [False] * 6
    assert not torch.is_autocast_enabled("cpu")


def test_clipping_happens_after_unscaling():
    # With a huge loss scale, clipping the *scaled* gradients would shrink the update by the
    # scale factor; clipping after unscale_ gives the same update as plain fp32 clipping.
    inputs, targets = make_data(n=16)
    clipped_fp32, clipped_fp16 = make_model(), make_model()
    opt32 = torch.optim.SGD(clipped_fp32.parameters(), lr=1.0)
    opt16 = torch.optim.SGD(clipped_fp16.parameters(), lr=1.0)
    loader = loader_of(inputs, targets, 16)
    before = [p.detach().clone() for p in clipped_fp16.parameters()]
    train_one_epoch(
        clipped_fp32, loader, opt32, nn.CrossEntropyLoss(), device="cpu", clip_grad_norm=0.1
    )
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**12)
    train_one_epoch(
        clipped_fp16, loader, opt16, nn.CrossEntropyLoss(), device="cpu", amp="fp16",
        scaler=scaler, clip_grad_norm=0.1,
    )  # fmt: skip
    step32 = torch.cat([(p - b).flatten() for p, b in zip(clipped_fp32.parameters(), before)])
    step16 = torch.cat([(p - b).flatten() for p, b in zip(clipped_fp16.parameters(), before)])
    assert step16.norm().item() == pytest.approx(0.1, rel=0.05)  # lr 1 x clipped norm 0.1
    assert_close(step16, step32, rtol=0.05, atol=2e-3)


def test_a_step_skipped_by_the_scaler_does_not_advance_the_scheduler():
    inputs, targets = make_data(n=32)
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    scaler = torch.amp.GradScaler("cpu")
    calls = [0]

    def poison(grad):  # the first backward overflows, as fp16 sometimes does
        calls[0] += 1
        return grad * float("inf") if calls[0] == 1 else grad

    model[0].weight.register_hook(poison)
    before = model[0].weight.detach().clone()
    train_one_epoch(
        model, loader_of(inputs, targets, 16), optimizer, nn.CrossEntropyLoss(), device="cpu",
        amp="fp16", scaler=scaler, scheduler=scheduler,
    )  # fmt: skip
    assert scheduler.last_epoch == 1  # two batches, one step skipped
    assert optimizer.param_groups[0]["lr"] == pytest.approx(0.05)
    assert not torch.equal(model[0].weight, before)  # the second step did happen


class NaNAfter(nn.Module):
    def __init__(self, after):
        super().__init__()
        self.linear = nn.Linear(6, 3)
        self.calls, self.after = 0, after

    def forward(self, x):
        self.calls += 1
        out = self.linear(x)
        return out * float("nan") if self.calls == self.after else out


def test_a_non_finite_loss_raises_naming_epoch_and_batch():
    inputs, targets = make_data()
    model = NaNAfter(after=3)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(NonFiniteLossError, match=r"epoch 2, batch 3"):
        train_one_epoch(
            model, loader_of(inputs, targets, 8), optimizer, nn.CrossEntropyLoss(), device="cpu",
            epoch=1,
        )  # fmt: skip


def test_skip_nonfinite_skips_the_step_and_keeps_weights_finite():
    inputs, targets = make_data()
    model = NaNAfter(after=2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = train_one_epoch(
        model, loader_of(inputs, targets, 8), optimizer, nn.CrossEntropyLoss(), device="cpu",
        skip_nonfinite=True,
    )  # fmt: skip
    assert torch.isfinite(torch.tensor(loss))
    assert all(torch.isfinite(p).all() for p in model.parameters())


class HostReads:
    """Counts reads of tensor values by the host (each waits for the GPU): item, tolist, float..."""

    NAMES = ("item", "tolist", "__float__", "__int__", "__bool__", "__index__")

    def __init__(self, monkeypatch):
        self.count = 0
        for name in self.NAMES:
            monkeypatch.setattr(torch.Tensor, name, self._counted(getattr(torch.Tensor, name)))

    def _counted(self, read):
        def counted(tensor, *args, **kwargs):
            self.count += 1
            return read(tensor, *args, **kwargs)

        return counted


@pytest.mark.parametrize("accumulate", [1, 3])
def test_no_host_read_per_step(monkeypatch, accumulate):
    # a read per step would make a GPU wait for each step before queueing the next one
    inputs, targets = make_data(n=96)
    steps = 48 // accumulate  # batches of 2, per epoch
    # lists of batches: a DataLoader reads a random seed of its own (a CPU tensor) per epoch
    train, val = list(loader_of(inputs, targets, 2)), list(loader_of(inputs, targets, 4))
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    reads = HostReads(monkeypatch)
    loss = train_one_epoch(model, train, optimizer, nn.CrossEntropyLoss(), device="cpu",
                           accumulate=accumulate)  # fmt: skip
    assert reads.count <= 1, f"{reads.count} reads in an epoch of {steps} steps"
    reads.count = 0
    history = fit(model, train, optimizer, nn.CrossEntropyLoss(), num_epochs=3, device="cpu",
                  progress=False, accumulate=accumulate, val_loader=val)  # fmt: skip
    # per epoch: the training losses, then evaluate's losses and its correct counts
    assert reads.count <= 3 * 3, f"{reads.count} reads in 3 epochs of {steps} steps and 24 batches"
    monkeypatch.undo()
    assert math.isfinite(loss) and len(history) == 3


def test_losses_read_in_chunks_add_up_as_read_one_by_one(monkeypatch):
    # a long epoch reads its losses every _SETTLE_EVERY steps; the sum must not change
    inputs, targets = make_data(n=96)
    train = list(loader_of(inputs, targets, 2))
    results = []
    for every in (4096, 5, 1):
        monkeypatch.setattr(companion.loop, "_SETTLE_EVERY", every)
        model = make_model()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        reads = HostReads(monkeypatch)
        loss = train_one_epoch(model, train, optimizer, nn.CrossEntropyLoss(), device="cpu")
        results.append((loss, reads.count))
        monkeypatch.undo()
    assert [count for _, count in results] == [1, 10, 48]
    assert results[0][0] == results[1][0] == results[2][0]
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    assert results[0][0] == hand_written_epoch(model, train, optimizer, nn.CrossEntropyLoss())


def test_a_non_finite_loss_found_later_leaves_no_checkpoint_past_it(tmp_path):
    inputs, targets = make_data()
    model = NaNAfter(after=5)  # batch 5 of epoch 1
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(NonFiniteLossError, match=r"epoch 1, batch 5 \(read when"):
        fit(model, loader_of(inputs, targets, 4), optimizer, nn.CrossEntropyLoss(), num_epochs=2,
            device="cpu", checkpoint_dir=tmp_path, checkpoint_every=2, progress=False)  # fmt: skip
    saved = sorted(p.name for p in tmp_path.glob("*.pt"))
    assert saved == ["ckpt-e0000-s000000002.pt", "ckpt-e0000-s000000004.pt"]
    state = torch.load(tmp_path / saved[-1], weights_only=True)
    assert all(torch.isfinite(v).all() for v in state["model"].values())


def test_a_loss_of_shape_one_is_summed_like_a_scalar():
    inputs, targets = make_data()
    losses = []
    for shape in ((), (1,)):
        model = make_model()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        loss_fn = lambda o, t, shape=shape: nn.functional.cross_entropy(o, t).reshape(shape)  # noqa: E731
        train = train_one_epoch(model, loader_of(inputs, targets, 8), optimizer, loss_fn,
                                device="cpu")  # fmt: skip
        losses.append((train, evaluate(model, loader_of(inputs, targets, 8), loss_fn)["loss"]))
    assert losses[0] == losses[1]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"amp": "fp32"}, r"amp must be None, 'bf16' or 'fp16', got 'fp32'"),
        ({"accumulate": 0}, r"accumulate must be an int >= 1.*got 0"),
        ({"accumulate": 2.5}, r"accumulate must be an int >= 1.*got 2.5"),
        ({"clip_grad_norm": -1}, r"clip_grad_norm must be None or a positive number, got -1"),
        ({"amp": "fp16"}, r"amp='fp16' needs a GradScaler"),
        ({"device": "tpu"}, r"device='tpu' is not a device"),
    ],
)
def test_bad_arguments_get_clear_errors(kwargs, match):
    inputs, targets = make_data()
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    args = {"device": "cpu", **kwargs}
    with pytest.raises(ValueError, match=match):
        train_one_epoch(
            model, loader_of(inputs, targets, 8), optimizer, nn.CrossEntropyLoss(), **args
        )


def test_a_loader_that_does_not_yield_pairs_is_named():
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    bare = [torch.randn(4, 6)]
    with pytest.raises(TypeError, match=r"\(inputs, targets\) pairs.*batch 1 it yielded a Tensor"):
        train_one_epoch(model, bare, optimizer, nn.CrossEntropyLoss(), device="cpu")
    triples = [(torch.randn(4, 6), torch.zeros(4).long(), torch.zeros(4))]
    with pytest.raises(TypeError, match=r"a tuple of length 3"):
        train_one_epoch(model, triples, optimizer, nn.CrossEntropyLoss(), device="cpu")


def test_a_model_on_another_device_is_named():
    model = make_model().to("meta")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    inputs, targets = make_data()
    with pytest.raises(ValueError, match=r"model is on meta but device='cpu'"):
        train_one_epoch(
            model, loader_of(inputs, targets, 8), optimizer, nn.CrossEntropyLoss(), device="cpu"
        )


def test_tuple_and_dict_inputs_are_unpacked():
    class TwoInputs(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Linear(3, 2), nn.Linear(3, 2)

        def forward(self, x, y):
            return self.a(x) + self.b(y)

    model = TwoInputs()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y, t = torch.randn(8, 3), torch.randn(8, 3), torch.randint(0, 2, (8,))
    train_one_epoch(model, [((x, y), t)], optimizer, nn.CrossEntropyLoss(), device="cpu")
    train_one_epoch(model, [({"x": x, "y": y}, t)], optimizer, nn.CrossEntropyLoss(), device="cpu")


# --- evaluate -------------------------------------------------------------------------------


def test_evaluate_uses_eval_and_inference_mode_and_restores_modes():
    inputs, targets = make_data()
    model = make_model(dropout=0.5).train()
    model[0].eval()  # a frozen submodule must stay in eval mode afterwards
    seen = []
    model[2].register_forward_hook(
        lambda m, i, o: seen.append((m.training, torch.is_inference_mode_enabled()))
    )
    result = evaluate(model, loader_of(inputs, targets, 16), nn.CrossEntropyLoss(), device="cpu")
    assert seen and all(s == (False, True) for s in seen)
    assert model.training and model[2].training and not model[0].training
    assert all(p.grad is None for p in model.parameters())
    assert set(result) == {"loss", "accuracy"}


def test_evaluate_loss_accuracy_and_metrics_are_correct():
    inputs, targets = make_data(n=30)
    model = make_model()
    with torch.no_grad():
        outputs = model(inputs)
    expected_loss = nn.CrossEntropyLoss()(outputs, targets).item()
    expected_acc = (outputs.argmax(1) == targets).float().mean().item()
    result = evaluate(
        model, loader_of(inputs, targets, 8), nn.CrossEntropyLoss(), device="cpu",
        metrics={"top2": lambda o, t: (o.topk(2, dim=1).indices == t[:, None]).any(1).float().mean()},
    )  # fmt: skip
    assert result["loss"] == pytest.approx(expected_loss, rel=1e-5)
    assert result["accuracy"] == pytest.approx(expected_acc)
    assert expected_acc <= result["top2"] <= 1


def test_evaluate_skips_accuracy_for_regression():
    inputs = torch.randn(10, 6)
    model = nn.Linear(6, 1)
    result = evaluate(model, [(inputs, torch.randn(10, 1))], nn.MSELoss(), device="cpu")
    assert set(result) == {"loss"}


def test_evaluate_restores_modes_even_when_forward_raises():
    model = make_model().train()
    with pytest.raises(RuntimeError):
        evaluate(
            model,
            [(torch.randn(4, 99), torch.zeros(4).long())],
            nn.CrossEntropyLoss(),
            device="cpu",
        )
    assert model.training


# --- fit --------------------------------------------------------------------------------------


def test_fit_records_history_and_steps_the_scheduler_per_epoch():
    inputs, targets = make_data(n=64)
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    loader = loader_of(inputs, targets, 16, shuffle=True)
    history = fit(
        model, loader, optimizer, nn.CrossEntropyLoss(), num_epochs=3, val_loader=loader,
        scheduler=scheduler, device="cpu", progress=False,
    )  # fmt: skip
    assert history.column("epoch") == [1, 2, 3]
    assert history.lr == pytest.approx([0.4, 0.2, 0.1])
    assert history.train_loss[-1] < history.train_loss[0]
    assert all(0 <= a <= 1 for a in history.column("val_accuracy"))
    assert "train_loss" in str(history) and "<table>" in history._repr_html_()
    assert not history.interrupted


def test_fit_plateau_scheduler_gets_the_validation_loss():
    inputs, targets = make_data(n=32)
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=0, factor=0.5)
    seen = []
    step = scheduler.step
    scheduler.step = lambda metric: (seen.append(metric), step(metric))
    train = loader_of(inputs, targets, 16)
    val = loader_of(inputs[:8], targets[:8], 8)
    history = fit(model, train, optimizer, nn.CrossEntropyLoss(), num_epochs=3, val_loader=val,
                  scheduler=scheduler, device="cpu", progress=False)  # fmt: skip
    assert seen == history.val_loss


def test_fit_step_scheduler_and_the_progress_bar(capsys):
    inputs, targets = make_data(n=64)
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.9)
    fit(model, loader_of(inputs, targets, 16), optimizer, nn.CrossEntropyLoss(), num_epochs=2,
        scheduler=scheduler, scheduler_step="step", device="cpu", progress=True)  # fmt: skip
    assert scheduler.last_epoch == 8  # 4 steps x 2 epochs
    err = capsys.readouterr().err
    assert "epoch 2/2" in err and "train_loss=" in err


def test_fit_keeps_the_last_checkpoints(tmp_path):
    inputs, targets = make_data(n=64)
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    fit(model, loader_of(inputs, targets, 16), optimizer, nn.CrossEntropyLoss(), num_epochs=4,
        device="cpu", checkpoint_dir=tmp_path, checkpoint_every=3, keep_last=2, progress=False)  # fmt: skip
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["ckpt-e0003-s000000015.pt", "ckpt-e0004-s000000016.pt"]
    state = companion.load_checkpoint(tmp_path / names[-1], model=copy.deepcopy(model))
    assert state["epoch"] == 4 and state["step"] == 0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"num_epochs": -1}, "num_epochs must be a non-negative int"),
        ({"num_epochs": 1, "resume": True}, "resume=True needs checkpoint_dir"),
        ({"num_epochs": 1, "scheduler_step": "batch"}, "scheduler_step must be 'epoch' or 'step'"),
        ({"num_epochs": 1, "checkpoint_every": 0}, "checkpoint_every must be None or an int >= 1"),
        ({"num_epochs": 1, "checkpoint_every": 5}, "checkpoint_every needs checkpoint_dir"),
        ({"num_epochs": 1, "checkpoint_dir": "x", "keep_last": 0}, "keep_last must be an int >= 1"),
    ],
)
def test_fit_bad_arguments(kwargs, match):
    model = make_model()
    with pytest.raises(ValueError, match=match):
        fit(model, [], torch.optim.SGD(model.parameters(), lr=0.1), nn.CrossEntropyLoss(), **kwargs)


def test_fit_resume_without_checkpoints_starts_fresh(tmp_path):
    inputs, targets = make_data(n=32)
    model = make_model()
    history = fit(model, loader_of(inputs, targets, 16), torch.optim.SGD(model.parameters(), lr=0.1),
                  nn.CrossEntropyLoss(), num_epochs=1, device="cpu", checkpoint_dir=tmp_path,
                  resume=True, progress=False)  # fmt: skip
    assert len(history) == 1


# --- exact resume, in fresh processes -----------------------------------------------------------


def _run(tmp_path, name, mode, stop_at=0):
    out = tmp_path / f"{name}.pt"
    subprocess.run(
        [
            sys.executable,
            str(HERE / "_resume_run.py"),
            str(out),
            str(tmp_path / "ckpt"),
            mode,
            str(stop_at),
        ],
        check=True,
        timeout=120,
    )
    return torch.load(out, weights_only=True)


def _assert_same_run(a, b):
    assert a["train_loss"] == b["train_loss"]  # bit-for-bit, as Python floats
    assert a["val_loss"] == b["val_loss"]
    for key in a["model"]:
        assert torch.equal(a["model"][key], b["model"][key]), key
    for pid, state in a["optimizer"]["state"].items():
        for name, value in state.items():
            assert torch.equal(value, b["optimizer"]["state"][pid][name]), (pid, name)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("full"), "full", "full")


def test_resume_after_an_epoch_is_bit_exact(tmp_path, uninterrupted):
    first = _run(tmp_path, "first", "epochs", 2)
    assert len(first["train_loss"]) == 2
    resumed = _run(tmp_path, "resumed", "resume")
    _assert_same_run(resumed, uninterrupted)


def test_sigterm_mid_epoch_saves_and_resume_is_bit_exact(tmp_path, uninterrupted):
    first = _run(tmp_path, "first", "signal", 13)  # batch 13 of the run: inside epoch 2
    assert first["interrupted"]
    assert len(first["train_loss"]) == 1
    newest = companion.latest_checkpoint(tmp_path / "ckpt")
    assert torch.load(newest, weights_only=True)["step"] > 0  # a mid-epoch checkpoint
    resumed = _run(tmp_path, "resumed", "resume")
    _assert_same_run(resumed, uninterrupted)


def test_sigterm_from_outside_stops_cleanly_with_a_checkpoint(tmp_path):
    script = (
        "import torch, companion\n"
        "from torch import nn\n"
        "m = nn.Linear(4, 2)\n"
        "data = [(torch.randn(8, 4), torch.randint(0, 2, (8,)))] * 50\n"
        f"h = companion.fit(m, data, torch.optim.SGD(m.parameters(), lr=0.01), nn.CrossEntropyLoss(),"
        f" num_epochs=10**6, device='cpu', checkpoint_dir={str(tmp_path)!r}, progress=False)\n"
        "print('interrupted' if h.interrupted else 'finished', flush=True)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 60
    while companion.latest_checkpoint(tmp_path) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out.strip() == "interrupted"
    assert "SIGTERM received" in err
    state = companion.load_checkpoint(companion.latest_checkpoint(tmp_path), model=nn.Linear(4, 2))
    assert state["epoch"] >= 1
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


# --- any batch shape: batch_fn and a loss that needs the inputs -----------------------------


class DictDataset(torch.utils.data.Dataset):
    def __init__(self, inputs, targets):
        self.inputs, self.targets = inputs, targets

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, i):
        return {"x": self.inputs[i], "y": self.targets[i], "weight": 1.0 + i % 3}


def test_batch_fn_trains_dict_batches_like_pairs():
    inputs, targets = make_data(n=32)
    pairs_model, dict_model = make_model(), make_model()
    pairs = loader_of(inputs, targets, 8)
    dicts = DataLoader(DictDataset(inputs, targets), batch_size=8)
    for model, loader, batch_fn in ((pairs_model, pairs, None),
                                    (dict_model, dicts, lambda b: (b["x"], b["y"]))):  # fmt: skip
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        fit(model, loader, optimizer, nn.CrossEntropyLoss(), num_epochs=2, val_loader=loader,
            device="cpu", progress=False, batch_fn=batch_fn)  # fmt: skip
    for a, b in zip(pairs_model.parameters(), dict_model.parameters(), strict=True):
        assert torch.equal(a, b)
    scores = evaluate(dict_model, dicts, nn.CrossEntropyLoss(), batch_fn=lambda b: (b["x"], b["y"]))
    assert scores == evaluate(pairs_model, pairs, nn.CrossEntropyLoss())


def test_a_dict_batch_without_batch_fn_suggests_one():
    inputs, targets = make_data(n=16)
    model = make_model()
    dicts = DataLoader(DictDataset(inputs, targets), batch_size=8)
    with pytest.raises(TypeError, match=r"batch_fn=lambda b: \(b\['x'\], b\['weight'\]\)"):
        train_one_epoch(model, dicts, torch.optim.SGD(model.parameters(), lr=0.1),
                        nn.CrossEntropyLoss(), device="cpu")  # fmt: skip
    with pytest.raises(TypeError, match="batch_fn must return an \\(inputs, targets\\) pair"):
        train_one_epoch(model, dicts, torch.optim.SGD(model.parameters(), lr=0.1),
                        nn.CrossEntropyLoss(), device="cpu", batch_fn=lambda b: b["x"])  # fmt: skip
    with pytest.raises(TypeError, match="batch_fn must be a function"):
        evaluate(model, dicts, nn.CrossEntropyLoss(), batch_fn="x")


def test_a_weighted_loss_gets_the_weights_from_the_targets_or_the_inputs():
    inputs, targets = make_data(n=24)
    dicts = DataLoader(DictDataset(inputs, targets), batch_size=6)
    weights = torch.tensor([1.0 + i % 3 for i in range(24)])

    def by_hand(model):
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for start in range(0, 24, 6):
            x, y, w = (
                inputs[start : start + 6],
                targets[start : start + 6],
                weights[start : start + 6],
            )
            optimizer.zero_grad()
            per_sample = nn.functional.cross_entropy(model(x), y, reduction="none")
            (per_sample * w).mean().backward()
            optimizer.step()

    reference = make_model()
    by_hand(reference)

    def weighted(outputs, targets):  # targets = (labels, weights): the batch_fn packs them
        labels, w = targets
        return (nn.functional.cross_entropy(outputs, labels, reduction="none") * w).mean()

    packed = make_model()
    train_one_epoch(packed, dicts, torch.optim.SGD(packed.parameters(), lr=0.1), weighted,
                    device="cpu", batch_fn=lambda b: (b["x"], (b["y"], b["weight"])))  # fmt: skip

    def with_inputs(outputs, targets, inputs):  # the inputs are a dict holding the weights
        per_sample = nn.functional.cross_entropy(outputs, targets, reduction="none")
        return (per_sample * inputs["weight"]).mean()

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = make_model()

        def forward(self, x, weight):
            return self.net(x)

    keyed = Model()
    train_one_epoch(keyed, dicts, torch.optim.SGD(keyed.parameters(), lr=0.1), with_inputs,
                    device="cpu", loss_takes_inputs=True,
                    batch_fn=lambda b: ({"x": b["x"], "weight": b["weight"]}, b["y"]))  # fmt: skip
    for a, b, c in zip(reference.parameters(), packed.parameters(), keyed.net.parameters()):
        assert_close(b, a)
        assert_close(c, a)


def test_eval_train_adds_train_metrics_and_leaves_training_unchanged():
    inputs, targets = make_data(n=40)
    runs = []
    for eval_train in (False, True):
        torch.manual_seed(3)
        model = make_model(dropout=0.3)
        loader = loader_of(inputs, targets, 8, shuffle=True)
        history = fit(model, loader, torch.optim.SGD(model.parameters(), lr=0.1),
                      nn.CrossEntropyLoss(), num_epochs=3, device="cpu", progress=False,
                      eval_train=eval_train)  # fmt: skip
        runs.append((model, history))
    (plain, h0), (evaluated, h1) = runs
    assert h0.train_loss == h1.train_loss
    for a, b in zip(plain.parameters(), evaluated.parameters(), strict=True):
        assert torch.equal(a, b)
    assert "train_accuracy" not in h0.columns()
    expected = evaluate(evaluated, loader_of(inputs, targets, 8), nn.CrossEntropyLoss())
    assert h1.records[-1]["train_accuracy"] == expected["accuracy"]
    assert h1.records[-1]["train_eval_loss"] == pytest.approx(expected["loss"], rel=1e-6)


# --- one API ------------------------------------------------------------------------------------


def test_fit_records_the_learning_rate_of_every_parameter_group():
    inputs, targets = make_data(n=32)
    model = make_model()
    optimizer = torch.optim.SGD([{"params": model[0].parameters(), "lr": 0.1},
                                 {"params": model[2].parameters(), "lr": 0.01}])  # fmt: skip
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    history = fit(model, loader_of(inputs, targets, 16), optimizer, nn.CrossEntropyLoss(),
                  num_epochs=2, scheduler=scheduler, device="cpu", progress=False)  # fmt: skip
    assert history.lr == [0.1, 0.05] and history.lr_1 == [0.01, 0.005]


def test_train_one_epoch_and_evaluate_default_to_the_models_device():
    inputs, targets = make_data(n=16)
    model = make_model()
    loader = loader_of(inputs, targets, 8)
    train_one_epoch(model, loader, torch.optim.SGD(model.parameters(), lr=0.1),
                    nn.CrossEntropyLoss())  # fmt: skip
    assert evaluate(model, loader, nn.CrossEntropyLoss()) == evaluate(
        model, loader, nn.CrossEntropyLoss(), device="cpu"
    )


def test_ctrl_c_without_checkpoint_dir_returns_the_history_marked_interrupted(tmp_path):
    script = (
        "import sys, torch, companion\n"
        "from torch import nn\n"
        "m = nn.Linear(4, 2)\n"
        "data = [(torch.randn(8, 4), torch.randint(0, 2, (8,)))] * 50\n"
        "class Tell:\n"
        "    def on_epoch_end(self, record, state):\n"
        "        if state.epoch == 2: print('ready', flush=True)\n"
        "h = companion.fit(m, data, torch.optim.SGD(m.parameters(), lr=0.01),"
        " nn.CrossEntropyLoss(), num_epochs=10**6, device='cpu', progress=False,"
        " callbacks=[Tell()])\n"
        "print(len(h), h.interrupted, flush=True)\n"
        "sys.exit(130 if h.interrupted else 0)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=tmp_path)  # fmt: skip
    assert proc.stdout.readline().strip() == "ready"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    epochs, interrupted = out.split()
    assert proc.returncode == 130, err
    assert int(epochs) >= 2 and interrupted == "True"
    assert "SIGINT received: stopping after this step (no checkpoint_dir" in err
    assert "Traceback" not in err and list(tmp_path.iterdir()) == []


def test_the_progress_bar_ends_at_every_batch_of_the_epoch(capsys):
    # the bar touches tqdm at most every 0.1 s during the epoch; its end must still be exact
    inputs, targets = make_data(n=64)
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    fit(model, loader_of(inputs, targets, 8), optimizer, nn.CrossEntropyLoss(), num_epochs=2,
        device="cpu", progress=True)  # fmt: skip
    err = capsys.readouterr().err
    assert "8/8" in err and "epoch 2/2" in err


def test_fit_trains_on_a_loader_without_a_length(capsys):
    class Stream(torch.utils.data.IterableDataset):
        def __iter__(self):
            inputs, targets = make_data(n=48)
            return iter(zip(inputs, targets))

    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = torch.utils.data.DataLoader(Stream(), batch_size=16)
    history = fit(model, loader, optimizer, nn.CrossEntropyLoss(), num_epochs=2, device="cpu",
                  progress=True)  # fmt: skip
    assert len(history.train_loss) == 2 and "epoch 2/2" in capsys.readouterr().err
