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
