"""companion.updates: an accumulated step equal to the large batch's, and a safe EMA update."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn
from torch.testing import assert_close

from companion.updates import accumulation_step, ema_update


def _problem(seed: int, n: int):
    g = torch.Generator().manual_seed(seed)
    inputs, targets = torch.randn(n, 5, generator=g), torch.randint(0, 3, (n,), generator=g)
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3))
    return model, inputs, targets


def _large_step(model, optimizer, loss_fn, inputs, targets) -> float:
    optimizer.zero_grad()
    loss = loss_fn(model(inputs), targets)
    loss.backward()
    optimizer.step()
    return loss.item()


def _split(inputs, targets, sizes):
    return list(zip(inputs.split(sizes), targets.split(sizes)))


@pytest.mark.parametrize(
    ("sizes", "make_optimizer"),
    [
        ([4, 4, 4, 4], lambda p: torch.optim.SGD(p, lr=0.5)),
        ([7, 1, 5, 3], lambda p: torch.optim.SGD(p, lr=0.5, momentum=0.9)),  # uneven sizes
        ([2, 14], lambda p: torch.optim.AdamW(p, lr=0.05)),
        ([16], lambda p: torch.optim.SGD(p, lr=0.5)),
    ],
    ids=["even", "uneven-momentum", "uneven-adamw", "one"],
)
def test_three_steps_equal_three_large_batch_steps(sizes, make_optimizer):
    large, inputs, targets = _problem(0, 16)
    small = copy.deepcopy(large)
    opt_large, opt_small = make_optimizer(large.parameters()), make_optimizer(small.parameters())
    loss_fn = nn.CrossEntropyLoss()
    for step in range(3):
        shifted = inputs + step  # a different batch each step
        want = _large_step(large, opt_large, loss_fn, shifted, targets)
        got = accumulation_step(small, opt_small, loss_fn, _split(shifted, targets, sizes))
        assert isinstance(got, float)
        assert got == pytest.approx(want, rel=1e-5)
        for a, b in zip(small.parameters(), large.parameters()):
            assert_close(a.grad, b.grad)  # .grad holds the large batch's gradient afterwards
            assert_close(a, b)


def test_earlier_gradients_do_not_leak_in():
    large, inputs, targets = _problem(1, 12)
    small = copy.deepcopy(large)
    for p in small.parameters():
        p.grad = torch.full_like(p, 100.0)  # left over from something else
    _large_step(
        large,
        torch.optim.SGD(large.parameters(), lr=0.1),
        nn.MSELoss(),
        inputs,
        0.0 * inputs[:, :3],
    )
    accumulation_step(
        small, torch.optim.SGD(small.parameters(), lr=0.1), nn.MSELoss(),
        _split(inputs, 0.0 * inputs[:, :3], [5, 7]),
    )  # fmt: skip
    for a, b in zip(small.parameters(), large.parameters()):
        assert_close(a, b)


def test_one_backward_per_micro_batch():
    model, inputs, targets = _problem(2, 10)
    backwards = []
    model[0].weight.register_post_accumulate_grad_hook(lambda p: backwards.append(1))
    forwards = []
    model.register_forward_hook(lambda module, args, out: forwards.append(args[0].shape[0]))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    accumulation_step(model, optimizer, nn.CrossEntropyLoss(), _split(inputs, targets, [3, 3, 4]))
    assert forwards == [3, 3, 4], "each micro-batch has its own forward pass"
    assert len(backwards) == 3, "each micro-batch has its own backward pass"


def _padded(seed: int, n: int, pad: int, first: int):
    """A classification problem whose first micro-batch (`first` rows) is mostly padding."""
    model, inputs, targets = _problem(seed, n)
    targets[: first - 1] = pad  # one counted target left in the first micro-batch
    targets[-1] = pad
    return model, inputs, targets


@pytest.mark.parametrize(
    ("loss_fn", "pad", "sizes"),
    [
        (nn.CrossEntropyLoss(), -100, [6, 2, 8]),  # the default ignore_index
        (nn.CrossEntropyLoss(ignore_index=0, label_smoothing=0.1), 0, [3, 9, 4]),
        (nn.CrossEntropyLoss(weight=torch.tensor([0.5, 2.0, 1.0]), ignore_index=7), 7, [5, 11]),
        (nn.CrossEntropyLoss(reduction="sum"), -100, [6, 2, 8]),
    ],
    ids=["padding", "ignore-0-smoothing", "class-weights", "sum"],
)
def test_padded_targets_weigh_by_what_counts(loss_fn, pad, sizes):
    large, inputs, targets = _padded(3, 16, pad, first=sizes[0])
    small = copy.deepcopy(large)
    opt_large = torch.optim.SGD(large.parameters(), lr=0.5, momentum=0.9)
    opt_small = torch.optim.SGD(small.parameters(), lr=0.5, momentum=0.9)
    for step in range(2):
        shifted = inputs + step
        want = _large_step(large, opt_large, loss_fn, shifted, targets)
        got = accumulation_step(small, opt_small, loss_fn, _split(shifted, targets, sizes))
        assert got == pytest.approx(want, rel=1e-5)
        for a, b in zip(small.parameters(), large.parameters()):
            assert_close(a.grad, b.grad)
            assert_close(a, b)


def test_sum_reduction_adds_the_micro_batches_as_they_are():
    large, inputs, _ = _problem(4, 12)
    targets = torch.randn(12, 3, generator=torch.Generator().manual_seed(4))
    small = copy.deepcopy(large)
    loss_fn = nn.MSELoss(reduction="sum")
    want = _large_step(
        large, torch.optim.SGD(large.parameters(), lr=0.01), loss_fn, inputs, targets
    )
    got = accumulation_step(
        small,
        torch.optim.SGD(small.parameters(), lr=0.01),
        loss_fn,
        _split(inputs, targets, [2, 7, 3]),
    )
    assert got == pytest.approx(want, rel=1e-5)
    for a, b in zip(small.parameters(), large.parameters()):
        assert_close(a, b)


def test_a_micro_batch_of_padding_only_is_skipped():
    large, inputs, targets = _problem(5, 10)
    targets[4:7] = -100  # the second micro-batch is all padding: its mean would be NaN
    small = copy.deepcopy(large)
    forwards = []
    small.register_forward_hook(lambda module, args, out: forwards.append(args[0].shape[0]))
    loss_fn = nn.CrossEntropyLoss()
    want = _large_step(large, torch.optim.SGD(large.parameters(), lr=0.5), loss_fn, inputs, targets)
    got = accumulation_step(
        small,
        torch.optim.SGD(small.parameters(), lr=0.5),
        loss_fn,
        _split(inputs, targets, [4, 3, 3]),
    )
    assert forwards == [4, 3]
    assert got == pytest.approx(want, rel=1e-5)
    for a, b in zip(small.parameters(), large.parameters()):
        assert_close(a, b)


def test_batch_norm_breaks_the_equality():
    # Documented: each micro-batch is normalised with its own statistics.
    torch.manual_seed(0)
    large = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.Linear(6, 2))
    small = copy.deepcopy(large)
    inputs, targets = torch.randn(12, 4), torch.randint(0, 2, (12,))
    loss_fn = nn.CrossEntropyLoss()
    _large_step(large, torch.optim.SGD(large.parameters(), lr=0.5), loss_fn, inputs, targets)
    accumulation_step(
        small, torch.optim.SGD(small.parameters(), lr=0.5), loss_fn, _split(inputs, targets, [6, 6])
    )
    assert not torch.allclose(small[0].weight, large[0].weight, atol=1e-5)


@pytest.mark.parametrize(
    ("micro_batches", "loss_fn", "error", "words"),
    [
        ([], nn.MSELoss(), ValueError, r"micro_batches is empty"),
        ([(torch.ones(2, 5), torch.ones(2, 3))], nn.MSELoss(reduction="none"), ValueError,
         r"reduction='mean' or 'sum'\), got reduction='none'"),
        ([(torch.ones(2, 5), torch.full((2,), -100))], nn.CrossEntropyLoss(), ValueError,
         r"no target counts"),
        ([torch.ones(2, 5)], nn.MSELoss(), TypeError,
         r"micro_batches\[0\] must be an \(inputs, targets\) pair, got Tensor"),
        ([(torch.ones(2, 5), torch.ones(2, 3), 1)], nn.MSELoss(), TypeError, r"tuple of length 3"),
        ([(torch.ones(2, 5), 3.0)], nn.MSELoss(), TypeError,
         r"targets must be a tensor with a batch dimension, got float"),
        ([(torch.ones(2, 5), torch.ones(2, 3)), (torch.ones(0, 5), torch.ones(0, 3))], nn.MSELoss(),
         ValueError, r"micro_batches\[1\] is empty"),
    ],
)  # fmt: skip
def test_bad_arguments_are_named(micro_batches, loss_fn, error, words):
    model = nn.Linear(5, 3)
    before = copy.deepcopy(model.state_dict())
    with pytest.raises(error, match=words):
        accumulation_step(
            model, torch.optim.SGD(model.parameters(), lr=1.0), loss_fn, micro_batches
        )
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())


def _bn_model(seed: int) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))


def _trained_a_little(model: nn.Module) -> nn.Module:
    optimizer = torch.optim.SGD(model.parameters(), lr=0.3)
    for _ in range(2):
        optimizer.zero_grad()
        model(torch.randn(8, 3) + 2).pow(2).mean().backward()
        optimizer.step()
    return model


@pytest.mark.parametrize("decay", [0.0, 0.5, 0.9, 1.0])
def test_parameters_move_by_the_formula_and_buffers_are_copied(decay):
    ema_model = _bn_model(0)
    model = _trained_a_little(_bn_model(0))
    old = copy.deepcopy(ema_model.state_dict())
    ema_update(ema_model, model, decay)
    for name, value in model.named_parameters():
        assert_close(
            ema_model.get_parameter(name), decay * old[name] + (1 - decay) * value.detach()
        )
    for name, value in model.named_buffers():
        assert torch.equal(ema_model.get_buffer(name), value), f"buffer {name} is copied"


def test_equals_averaged_model_with_the_ema_function():
    decay = 0.8
    model = _bn_model(1)
    ema_model = copy.deepcopy(model)
    averaged = torch.optim.swa_utils.AveragedModel(
        model, multi_avg_fn=torch.optim.swa_utils.get_ema_multi_avg_fn(decay)
    )
    averaged.update_parameters(model)  # the first call copies; ema_model starts as that copy
    optimizer = torch.optim.SGD(model.parameters(), lr=0.2)
    for _ in range(5):
        optimizer.zero_grad()
        model(torch.randn(8, 3)).pow(2).mean().backward()
        optimizer.step()
        ema_update(ema_model, model, decay)
        averaged.update_parameters(model)
    for a, b in zip(ema_model.state_dict().values(), averaged.module.state_dict().values()):
        assert_close(a, b)


def test_in_place_without_a_graph_and_never_trained():
    model = _trained_a_little(_bn_model(2))
    ema_model = _bn_model(3)
    held = ema_model.state_dict()  # tensors sharing the parameters' memory
    identities = [id(p) for p in ema_model.parameters()]
    model_before = copy.deepcopy(model.state_dict())
    ema_update(ema_model, model, 0.5)
    assert [id(p) for p in ema_model.parameters()] == identities
    for name, value in ema_model.state_dict().items():
        assert torch.equal(held[name], value), f"{name} was replaced, not updated in place"
    for p in ema_model.parameters():
        assert p.is_leaf and p.grad_fn is None and not p.requires_grad
    assert not ema_model(torch.randn(2, 3)).requires_grad
    assert all(p.requires_grad for p in model.parameters()), "model is not changed"
    for name, value in model.state_dict().items():
        assert torch.equal(model_before[name], value)


def test_works_with_grad_enabled_and_a_graph_around():
    model = _bn_model(4)
    ema_model = copy.deepcopy(model)  # its parameters still require grad: the leaf case
    loss = model(torch.randn(4, 3)).sum()  # a live graph through model's parameters
    ema_update(ema_model, model, 0.9)
    loss.backward()  # model's saved tensors were not modified
    assert all(p.grad is not None for p in model.parameters())


def test_an_average_on_another_device():
    model = _bn_model(5)
    ema_model = copy.deepcopy(model).to("meta")  # stands in for a GPU/CPU split
    ema_update(ema_model, model, 0.9)
    assert all(p.device.type == "meta" and not p.requires_grad for p in ema_model.parameters())


@pytest.mark.parametrize(
    ("decay", "error", "words"),
    [
        (1.5, ValueError, r"decay must be in \[0, 1\].*got 1.5"),
        (-0.1, ValueError, r"got -0.1"),
        (float("nan"), ValueError, r"got nan"),
        ("0.9", TypeError, r"decay must be a number in \[0, 1\], got str"),
        (True, TypeError, r"got bool"),
    ],
)
def test_bad_decay_is_named(decay, error, words):
    with pytest.raises(error, match=words):
        ema_update(_bn_model(0), _bn_model(0), decay)


def test_mismatched_models_are_named():
    with pytest.raises(
        ValueError,
        match=r"same parameters: ema_model lacks \['1.bias', '1.weight', '2.bias'\]; build",
    ):
        ema_update(nn.Sequential(nn.Linear(3, 4)), _bn_model(0), 0.9)
    wide = nn.Sequential(nn.Linear(3, 5), nn.BatchNorm1d(4), nn.Linear(4, 2))
    with pytest.raises(ValueError, match=r"shape of parameter '0.weight': \(5, 3\) and \(4, 3\)"):
        ema_update(wide, _bn_model(0), 0.9)
    no_stats = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4, track_running_stats=False),
                             nn.Linear(4, 2))  # fmt: skip
    with pytest.raises(ValueError, match=r"same buffers: model lacks \['1.num_batches_tracked'"):
        ema_update(_bn_model(0), no_stats, 0.9)
    with pytest.raises(TypeError, match=r"model must be an nn.Module, got dict"):
        ema_update(_bn_model(0), {}, 0.9)
