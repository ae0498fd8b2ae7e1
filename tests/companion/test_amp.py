"""Tests for companion/amp.py."""

import pytest
import torch
from torch import nn

from companion import autocast, make_scaler
from companion.amp import check_amp


@pytest.mark.parametrize("amp", ["fp32", "float16", 16, True])
def test_unknown_amp_values_are_named(amp):
    with pytest.raises(ValueError, match=r"amp must be None, 'bf16' or 'fp16'"):
        check_amp(amp)


def test_cpu_autocast_runs_matmuls_in_bf16():
    with autocast("cpu", "bf16"):
        out = nn.Linear(4, 2)(torch.randn(3, 4))
    assert out.dtype == torch.bfloat16
    with autocast("cpu", None):
        assert nn.Linear(4, 2)(torch.randn(3, 4)).dtype == torch.float32


def test_only_fp16_gets_a_scaler():
    assert isinstance(make_scaler("cpu", "fp16"), torch.amp.GradScaler)
    assert make_scaler("cpu", "bf16") is None and make_scaler("cpu", None) is None


@pytest.mark.requires_cuda
def test_fp16_training_on_cuda():
    from companion import train_one_epoch

    model = nn.Linear(8, 2).cuda()
    data = [(torch.randn(16, 8), torch.randint(0, 2, (16,)))] * 4
    scaler = make_scaler("cuda", "fp16")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = train_one_epoch(
        model, data, optimizer, nn.CrossEntropyLoss(), device="cuda", amp="fp16", scaler=scaler
    )
    assert loss == loss  # finite


def _batch(seed=0, n=8):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, 4, generator=g), torch.randint(0, 3, (n,), generator=g)


def _model(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))


def test_amp_step_autocasts_forward_and_loss_only():
    from companion import amp_step

    model = _model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    seen = {}

    def record(where):  # a hook that returns None, so it changes nothing
        seen.setdefault(where, torch.is_autocast_enabled("cpu"))

    model.register_forward_hook(lambda *_: record("forward"))

    def loss_fn(outputs, targets):
        record("loss")
        return nn.functional.cross_entropy(outputs, targets)

    model[0].weight.register_hook(lambda grad: record("backward"))
    optimizer.register_step_pre_hook(lambda *_: record("step"))
    x, y = _batch()
    amp_step(model, optimizer, loss_fn, x, y, torch.amp.GradScaler("cpu"), "cpu", torch.float16)
    assert seen == {"forward": True, "loss": True, "backward": False, "step": False}


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_amp_step_moves_the_weights_like_a_float32_step(dtype):
    from companion import amp_step

    x, y = _batch()
    plain, mixed = _model(), _model()
    opt = torch.optim.SGD(plain.parameters(), lr=0.5)
    nn.functional.cross_entropy(plain(x), y).backward()
    opt.step()
    scaler = torch.amp.GradScaler("cpu") if dtype == torch.float16 else None
    loss = amp_step(
        mixed, torch.optim.SGD(mixed.parameters(), lr=0.5), nn.CrossEntropyLoss(), x, y,
        scaler, "cpu", dtype,
    )  # fmt: skip
    assert isinstance(loss, float) and loss > 0
    for a, b in zip(plain.parameters(), mixed.parameters()):
        torch.testing.assert_close(a, b, atol=2e-2, rtol=0)  # the scale was divided out


def test_amp_step_clears_old_gradients():
    from companion import amp_step

    x, y = _batch()
    fresh, stale = _model(), _model()
    for p in stale.parameters():
        p.grad = torch.full_like(p, 100.0)
    for model in (fresh, stale):
        amp_step(
            model, torch.optim.SGD(model.parameters(), lr=0.1), nn.CrossEntropyLoss(), x, y,
            None, "cpu", torch.bfloat16,
        )  # fmt: skip
    for a, b in zip(fresh.parameters(), stale.parameters()):
        torch.testing.assert_close(a, b)


def test_amp_step_skips_an_overflowing_step_and_updates_the_scale_every_step():
    from companion import amp_step

    model = _model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=256.0, growth_interval=1)
    x, y = _batch()
    scales = []
    for step in range(4):
        inputs = x.clone()
        if step == 2:
            inputs[0, 0] = 1e6  # beyond float16's range (65504): inf in the forward pass
        before = [p.detach().clone() for p in model.parameters()]
        loss = amp_step(model, optimizer, nn.CrossEntropyLoss(), inputs, y, scaler, "cpu",
                        torch.float16)  # fmt: skip
        moved = any(not torch.equal(a, p) for a, p in zip(before, model.parameters()))
        assert moved == (step != 2)
        assert (loss == loss and abs(loss) != float("inf")) == (step != 2)
        scales.append(scaler.get_scale())
    assert scales == [512.0, 1024.0, 512.0, 1024.0]


def test_amp_step_rejects_bad_arguments():
    from companion import amp_step

    model, (x, y) = _model(), _batch()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(ValueError, match="dtype must be torch.float16 or torch.bfloat16"):
        amp_step(model, opt, nn.CrossEntropyLoss(), x, y, None, "cpu", torch.float32)
    with pytest.raises(ValueError, match="needs a GradScaler"):
        amp_step(model, opt, nn.CrossEntropyLoss(), x, y, None, "cpu", torch.float16)
    with pytest.raises(TypeError, match="scaler must be a torch.amp.GradScaler or None"):
        amp_step(model, opt, nn.CrossEntropyLoss(), x, y, "fp16", "cpu", torch.float16)


def _scaled_backward(model, scaler, x, y):
    loss = nn.functional.cross_entropy(model(x), y)
    (scaler.scale(loss) if scaler is not None else loss).backward()


def test_clip_and_step_measures_and_clips_the_true_gradients():
    from companion import clip_and_step

    x, y = _batch(1)
    plain, mixed = _model(1), _model(1)
    _scaled_backward(plain, None, x, y)
    true_norm = nn.utils.clip_grad_norm_(plain.parameters(), 0.05).item()
    torch.optim.SGD(plain.parameters(), lr=1.0).step()
    scaler = torch.amp.GradScaler("cpu", init_scale=4096.0)
    _scaled_backward(mixed, scaler, x, y)
    norm = clip_and_step(mixed, torch.optim.SGD(mixed.parameters(), lr=1.0), scaler, 0.05)
    assert isinstance(norm, float)
    assert norm == pytest.approx(true_norm, rel=1e-5) and true_norm > 0.05  # clipping was active
    for a, b in zip(plain.parameters(), mixed.parameters()):
        torch.testing.assert_close(a, b)


def test_clip_and_step_skips_non_finite_gradients_and_lowers_the_scale():
    from companion import clip_and_step

    model = _model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=64.0)
    x, y = _batch()
    _scaled_backward(model, scaler, x, y)
    model[0].weight.grad[0, 0] = float("inf")
    before = [p.detach().clone() for p in model.parameters()]
    norm = clip_and_step(model, optimizer, scaler, 1.0)
    assert not (norm < float("inf"))  # inf or NaN
    assert all(torch.equal(a, p) for a, p in zip(before, model.parameters()))
    assert scaler.get_scale() == 32.0


def test_clip_and_step_without_a_scaler_clips_then_steps():
    from companion import clip_and_step

    model = _model()
    x, y = _batch()
    _scaled_backward(model, None, x, y)
    before = [p.detach().clone() for p in model.parameters()]
    clip_and_step(model, torch.optim.SGD(model.parameters(), lr=1.0), None, 1e-3)
    moved = torch.cat([(p - b).flatten() for p, b in zip(model.parameters(), before)])
    assert moved.norm().item() == pytest.approx(1e-3, rel=1e-3)  # lr * max_norm


def test_clip_and_step_without_a_scaler_skips_non_finite_gradients():
    from companion import clip_and_step

    model = _model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = _batch()
    _scaled_backward(model, None, x, y)
    model[0].weight.grad[0, 0] = float("nan")
    before = [p.detach().clone() for p in model.parameters()]
    norm = clip_and_step(model, optimizer, None, 1.0)
    assert norm != norm  # NaN
    assert all(torch.equal(a, p) for a, p in zip(before, model.parameters()))
    assert optimizer.state_dict()["state"] == {}  # no momentum started from the bad step


@pytest.mark.parametrize(
    ("max_norm", "error"), [(0.0, ValueError), (-1, ValueError), ("1", TypeError)]
)
def test_clip_and_step_rejects_bad_max_norm(max_norm, error):
    from companion import clip_and_step

    model = _model()
    with pytest.raises(error, match="max_norm must be"):
        clip_and_step(model, torch.optim.SGD(model.parameters(), lr=0.1), None, max_norm)
