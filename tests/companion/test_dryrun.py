"""Tests for companion.dryrun: output_shape finds a module's output shape without computing."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from companion.dryrun import output_shape


def _features() -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(1, 16, kernel_size=3, padding=1),
        nn.BatchNorm2d(16),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, kernel_size=3),
        nn.ReLU(),
        nn.MaxPool2d(2),
    )


@pytest.mark.parametrize(("height", "width"), [(28, 28), (9, 32), (13, 21), (64, 8)])
def test_output_shape_equals_a_real_forward(height, width):
    features = _features().eval()
    real = features(torch.zeros(2, 1, height, width)).shape
    assert output_shape(features, (2, 1, height, width)) == real


def test_in_features_for_a_linear_layer_fits():
    features = _features()
    n = math.prod(output_shape(features, (1, 1, 28, 28))[1:])
    assert n == 32 * 6 * 6
    model = nn.Sequential(features, nn.Flatten(), nn.Linear(n, 10))
    assert model(torch.randn(3, 1, 28, 28)).shape == (3, 10)


def test_module_is_left_unchanged():
    torch.manual_seed(0)
    features = _features()
    features.train()
    before = {k: v.clone() for k, v in features.state_dict().items()}
    output_shape(features, (4, 1, 16, 16))
    after = features.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before), "statistics were updated"
    assert all(v.device.type == "cpu" for v in after.values())
    assert features.training


def test_huge_input_costs_no_memory():
    # 1e12 elements would need 4 TB if it were really computed
    assert output_shape(nn.Flatten(), (1000, 1000, 1000, 1000)) == (1000, 10**9)


def test_dtype_is_used():
    assert output_shape(nn.Identity(), (2, 3), dtype=torch.float64) == (2, 3)


def test_too_small_input_is_a_value_error_naming_the_shape():
    with pytest.raises(ValueError, match=r"\(1, 1, 7, 30\)"):
        output_shape(_features(), (1, 1, 7, 30))


def test_wrong_channels_is_a_value_error():
    with pytest.raises(ValueError, match="cannot take an input of shape"):
        output_shape(_features(), (1, 3, 28, 28))


def test_plain_tensor_attribute_names_register_buffer():
    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = torch.ones(3)

        def forward(self, x):
            return x * self.scale

    with pytest.raises(ValueError, match="register_buffer"):
        output_shape(Scaled(), (2, 3))


def test_registered_buffer_runs():
    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("scale", torch.ones(3))

        def forward(self, x):
            return x * self.scale

    assert output_shape(Scaled(), (2, 3)) == (2, 3)


@pytest.mark.parametrize("bad", [nn.Linear, "model", None])
def test_bad_module_is_a_type_error(bad):
    with pytest.raises(TypeError, match="module must be an nn.Module"):
        output_shape(bad, (1, 4))


@pytest.mark.parametrize("bad", [4, "1x4", (), None])
def test_bad_shape_type_is_a_type_error(bad):
    with pytest.raises(TypeError, match="input_shape"):
        output_shape(nn.Linear(4, 2), bad)


@pytest.mark.parametrize("bad", [(0, 4), (1, -4), (1, 4.0), (True, 4)])
def test_bad_sizes_are_value_errors(bad):
    with pytest.raises(ValueError, match="positive ints"):
        output_shape(nn.Linear(4, 2), bad)


def test_torch_size_is_accepted():
    assert output_shape(nn.Linear(4, 2), torch.Size([3, 4])) == (3, 2)


def test_tuple_output_is_a_type_error():
    class Two(nn.Module):
        def forward(self, x):
            return x, x

    with pytest.raises(TypeError, match="returns one tensor"):
        output_shape(Two(), (1, 4))
