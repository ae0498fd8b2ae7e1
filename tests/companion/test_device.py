"""Tests for companion/device.py (and the CUDA path where a GPU exists)."""

import pytest
import torch

from companion import pick_device


def test_auto_picks_cuda_then_mps_then_cpu():
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    if not torch.cuda.is_available() and torch.backends.mps.is_available():
        expected = "mps"
    assert pick_device("auto").type == expected


def test_explicit_devices_are_returned():
    assert pick_device("cpu") == torch.device("cpu")
    assert pick_device(torch.device("cpu")) == torch.device("cpu")


def test_bad_values_are_named():
    with pytest.raises(TypeError, match="device must be 'auto'.*got int"):
        pick_device(0)
    with pytest.raises(ValueError, match="device='gpu' is not a device PyTorch knows"):
        pick_device("gpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message when CUDA is missing")
def test_unavailable_cuda_says_why():
    with pytest.raises(RuntimeError, match="CUDA is not available.*device='auto'"):
        pick_device("cuda")


@pytest.mark.requires_cuda
def test_cuda_index_out_of_range():
    with pytest.raises(RuntimeError, match="CUDA device"):
        pick_device(f"cuda:{torch.cuda.device_count()}")
