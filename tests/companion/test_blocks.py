"""Tests for companion.blocks.ResidualBlock and Standardize (WithFeatures: test_notebook.py)."""

from __future__ import annotations

import io

import numpy as np
import pytest
import torch
from torch import nn

from companion.blocks import ResidualBlock, Standardize


def test_residual_block_starts_as_the_identity_in_both_modes():
    x = torch.randn(3, 4, 5, 7)
    for training in (True, False):
        block = ResidualBlock(4).train(training)
        assert [n for n, _ in block.named_children()] == ["branch", "shortcut"]
        assert isinstance(block.shortcut, nn.Identity)  # nothing to learn where shapes match
        xg = x.clone().requires_grad_(True)
        out = block(xg)
        torch.testing.assert_close(out, x)  # negative entries too: no ReLU after the sum
        weights = torch.randn_like(out)
        (out * weights).sum().backward()
        torch.testing.assert_close(xg.grad, weights)  # the gradient passes back unchanged
    with pytest.raises(ValueError, match="in_channels must be a positive int, got 0"):
        ResidualBlock(0)


def test_residual_block_learns_from_the_identity():
    torch.manual_seed(0)
    block = ResidualBlock(4).train()
    x, target = torch.randn(3, 4, 5, 7), torch.randn(3, 4, 5, 7)
    optimizer = torch.optim.SGD(block.parameters(), lr=0.1)
    moved = set()
    for _ in range(2):
        optimizer.zero_grad()
        nn.functional.mse_loss(block(x), target).backward()
        moved |= {n for n, p in block.named_parameters() if p.grad.abs().sum() > 0}
        optimizer.step()
    assert moved == {n for n, _ in block.named_parameters()}  # nothing stuck at zero
    assert not torch.allclose(block(x), x)


def test_residual_block_projects_where_the_shape_changes():
    for out_channels, stride in ((6, 1), (3, 2), (6, 2), (2, 2)):
        block = ResidualBlock(3, out_channels, stride=stride).eval()
        x = torch.randn(2, 3, 5, 7, requires_grad=True)
        out = block(x)
        assert out.shape == (2, out_channels, -(-5 // stride), -(-7 // stride))
        shortcut_params = sum(p.numel() for p in block.shortcut.parameters())
        assert shortcut_params == 3 * out_channels + 2 * out_channels  # 1x1 weights, norm's two
        torch.testing.assert_close(out, block.shortcut(x))  # a new branch adds nothing
        out.sum().backward()
        assert x.grad.abs().sum() > 0  # the gradient reaches x through the projection


def test_forward_standardizes_each_channel():
    norm = Standardize([0.0, 1.0, 2.0], [1.0, 2.0, 4.0])
    x = torch.randn(2, 3, 4, 5)
    mean = torch.tensor([0.0, 1.0, 2.0]).view(1, 3, 1, 1)
    std = torch.tensor([1.0, 2.0, 4.0]).view(1, 3, 1, 1)
    torch.testing.assert_close(norm(x), (x - mean) / std)


def test_any_number_of_trailing_dimensions():
    norm = Standardize([1.0, -1.0], [2.0, 0.5])
    x = torch.randn(5, 2)
    torch.testing.assert_close(norm(x), (x - torch.tensor([1.0, -1.0])) / torch.tensor([2.0, 0.5]))


def test_statistics_are_buffers_in_the_state_dict_not_parameters():
    norm = Standardize([0.5], [0.25])
    assert list(norm.parameters()) == []
    assert sorted(norm.state_dict()) == ["mean", "std"]
    assert norm.state_dict()["mean"].shape == (1,)
    assert not norm.mean.requires_grad


def test_statistics_follow_the_device_and_dtype():
    norm = Standardize([0.5, 0.5], [0.25, 0.25]).to("meta")
    assert norm.mean.device.type == "meta" and norm.std.device.type == "meta"
    out = norm(torch.empty(3, 2, 4, 4, device="meta"))
    assert out.device.type == "meta" and out.shape == (3, 2, 4, 4)
    double = Standardize([0.5], [0.25]).double()
    assert double.mean.dtype == torch.float64
    assert double(torch.ones(1, 1, 2, 2, dtype=torch.float64)).dtype == torch.float64


@pytest.mark.parametrize(
    "mean",
    [[1, 2, 3], np.array([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)],
)
def test_statistics_are_float32_copies(mean):
    norm = Standardize(mean, [1, 1, 1])
    assert norm.mean.dtype == torch.float32
    if isinstance(mean, torch.Tensor):
        mean.add_(100)  # the caller's tensor changes later: the module keeps its own copy
    assert norm.mean.tolist() == [1.0, 2.0, 3.0]


def test_checkpoint_round_trip_restores_the_statistics():
    saved = Standardize([0.1, 0.2], [0.3, 0.4])
    buffer = io.BytesIO()
    torch.save(saved.state_dict(), buffer)
    buffer.seek(0)
    fresh = Standardize([0.0, 0.0], [1.0, 1.0])
    fresh.load_state_dict(torch.load(buffer, weights_only=True))
    x = torch.randn(2, 2, 3, 3)
    torch.testing.assert_close(fresh(x), saved(x))


def test_inside_a_model_moves_with_it():
    model = nn.Sequential(Standardize([0.5], [0.2]), nn.Conv2d(1, 2, 3)).to("meta")
    assert {t.device.type for t in model.state_dict().values()} == {"meta"}


@pytest.mark.parametrize(
    ("mean", "std", "match"),
    [
        ([0.0, 0.0], [1.0], "one number per channel"),
        ([0.0], [0.0], "positive"),
        ([0.0], [-1.0], "positive"),
        ([], [], "non-empty"),
        ([[0.0]], [[1.0]], "non-empty lists"),
    ],
)
def test_bad_statistics_are_value_errors(mean, std, match):
    with pytest.raises(ValueError, match=match):
        Standardize(mean, std)


def test_wrong_channels_in_forward_is_a_value_error():
    with pytest.raises(ValueError, match=r"\(B, 3, \.\.\.\)"):
        Standardize([0.0] * 3, [1.0] * 3)(torch.zeros(2, 1, 4, 4))
