"""Tests for companion/schedule.py: steps_per_epoch and the schedule checks in fit."""

import warnings

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import companion
from companion import fit, steps_per_epoch


def make(n=50, batch_size=8):
    g = torch.Generator().manual_seed(0)
    inputs, targets = torch.randn(n, 4, generator=g), torch.randint(0, 2, (n,), generator=g)
    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    return model, optimizer, DataLoader(TensorDataset(inputs, targets), batch_size=batch_size)


@pytest.mark.parametrize(("accumulate", "expected"), [(1, 7), (2, 4), (3, 3), (7, 1), (8, 1)])
def test_steps_per_epoch_counts_the_steps_fit_takes(accumulate, expected):
    model, optimizer, loader = make()  # 50 samples in batches of 8: 7 batches
    assert steps_per_epoch(loader, accumulate) == expected
    steps = []
    optimizer.step = (lambda step: lambda *a, **k: (steps.append(1), step(*a, **k))[1])(
        optimizer.step
    )
    fit(model, loader, optimizer, nn.CrossEntropyLoss(), num_epochs=1, device="cpu",
        accumulate=accumulate, progress=False)  # fmt: skip
    assert len(steps) == expected


def test_steps_per_epoch_counts_one_shard_under_torchrun(monkeypatch):
    _, _, loader = make(n=50, batch_size=8)
    monkeypatch.setenv("WORLD_SIZE", "2")
    assert steps_per_epoch(loader) == 4  # 25 samples per rank
    assert steps_per_epoch(loader, accumulate=2) == 2


def test_steps_per_epoch_bad_arguments():
    with pytest.raises(TypeError, match="without len"):
        steps_per_epoch(iter([1, 2]))
    with pytest.raises(ValueError, match="accumulate must be an int >= 1"):
        steps_per_epoch(range(3), accumulate=0)


def test_one_cycle_with_accumulation_built_from_len_loader_warns_before_training():
    model, optimizer, loader = make()
    sched = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.5, epochs=2,
                                                steps_per_epoch=len(loader))  # fmt: skip
    with pytest.warns(
        UserWarning, match=r"total_steps=14, but this fit runs 8 optimizer steps.*57%"
    ):
        fit(model, loader, optimizer, nn.CrossEntropyLoss(), num_epochs=2, device="cpu",
            accumulate=2, scheduler=sched, scheduler_step="step", progress=False)  # fmt: skip


def test_one_cycle_built_with_steps_per_epoch_runs_its_whole_schedule_silently():
    model, optimizer, loader = make()
    sched = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=0.5, epochs=2, steps_per_epoch=steps_per_epoch(loader, accumulate=2)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        history = fit(model, loader, optimizer, nn.CrossEntropyLoss(), num_epochs=2,
                      device="cpu", accumulate=2, scheduler=sched, scheduler_step="step",
                      progress=False)  # fmt: skip
    assert sched.last_epoch == sched.total_steps == 8  # the whole schedule, not half of it
    assert history.lr[0] > history.lr[1]  # past the peak, annealing


def test_one_cycle_too_short_raises_before_any_step():
    model, optimizer, loader = make()
    before = model.weight.detach().clone()
    sched = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.5, total_steps=10)
    with pytest.raises(ValueError, match="total_steps=10, but this fit runs 21 optimizer steps"):
        fit(model, loader, optimizer, nn.CrossEntropyLoss(), num_epochs=3, device="cpu",
            scheduler=sched, scheduler_step="step", progress=False)  # fmt: skip
    assert torch.equal(model.weight, before)


@pytest.mark.parametrize("kind", ["onecycle", "warmup"])
def test_a_per_step_or_warm_up_schedule_stepped_per_epoch_warns(kind):
    model, optimizer, loader = make()
    if kind == "onecycle":
        sched = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.5, total_steps=21)
    else:
        sched = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.01, total_iters=20)
    with pytest.warns(UserWarning, match="stepped once per epoch.*steps_per_epoch"):
        fit(model, loader, optimizer, nn.CrossEntropyLoss(), num_epochs=3, device="cpu",
            scheduler=sched, progress=False)  # fmt: skip


def test_a_cosine_per_epoch_that_matches_num_epochs_is_quiet_and_one_that_does_not_warns():
    model, optimizer, loader = make()
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit(model, loader, optimizer, nn.CrossEntropyLoss(), num_epochs=2, device="cpu",
            scheduler=sched, progress=False)  # fmt: skip
    model, optimizer, loader = make()
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=2)
    with pytest.warns(UserWarning, match="T_max=2, but this fit runs 4 epochs.*climbs back up"):
        fit(model, loader, optimizer, nn.CrossEntropyLoss(), num_epochs=4, device="cpu",
            scheduler=sched, progress=False)  # fmt: skip


def test_steps_per_epoch_is_exported():
    assert companion.steps_per_epoch is steps_per_epoch
