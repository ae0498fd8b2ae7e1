"""companion.tensors: NumPy arrays to float32 tensors, sharing memory where no copy is needed."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from companion.tensors import as_float32


def _base() -> np.ndarray:
    return np.arange(24, dtype=np.float32).reshape(4, 6) / 7


@pytest.mark.parametrize(
    "view",
    [
        lambda a: a,
        lambda a: a.T,  # Fortran order
        lambda a: a[:, ::2],  # a step
        lambda a: a[1:3],
        lambda a: a[1:2, 2:3].reshape(()),  # 0-d
    ],
    ids=["contiguous", "transposed", "strided", "sliced", "0-d"],
)
def test_float32_on_the_cpu_is_a_view(view):
    array = view(_base())
    tensor = as_float32(array, "cpu")
    assert tensor.dtype == torch.float32 and tuple(tensor.shape) == array.shape
    assert np.shares_memory(tensor.numpy(), array)
    array[...] = -1.0  # writing into the array shows in the tensor
    assert torch.equal(tensor, torch.full(array.shape, -1.0))


@pytest.mark.parametrize("device", ["cpu", torch.device("cpu"), "cpu:0"])
def test_every_spelling_of_the_cpu_shares(device):
    array = _base()
    assert np.shares_memory(as_float32(array, device).numpy(), array)


@pytest.mark.parametrize(
    "array",
    [
        _base().astype(np.float64),
        np.arange(-3, 9).reshape(3, 4),  # int64
        np.arange(5, dtype=np.uint8),
        np.array([True, False, True]),
        _base().astype(np.float16),
        _base().astype(">f4"),  # float32, but big-endian: not what a tensor can view
    ],
    ids=["float64", "int64", "uint8", "bool", "float16", "big-endian"],
)
def test_other_dtypes_are_converted_into_a_copy(array):
    tensor = as_float32(array, "cpu")
    assert tensor.dtype == torch.float32 and tuple(tensor.shape) == array.shape
    assert torch.equal(tensor, torch.from_numpy(array.astype(np.float32)))
    assert not np.shares_memory(tensor.numpy(), array)


def test_float64_is_rounded_to_float32():
    array = np.array([0.1, 1 / 3, 1e-50, 1e50])
    with pytest.warns(RuntimeWarning, match="overflow"):  # NumPy says so; the value is kept as inf
        tensor = as_float32(array, "cpu")
    assert tensor[:2].tolist() == array[:2].astype(np.float32).tolist()
    assert tensor[2] == 0.0 and torch.isinf(tensor[3])  # what float32 can and cannot hold


@pytest.mark.parametrize(
    "view",
    [lambda a: a[::-1], lambda a: np.flip(a, axis=1), lambda a: a.astype(np.float64)[::-1, ::2]],
    ids=["reversed rows", "flipped columns", "float64 reversed and strided"],
)
def test_negative_strides_are_copied_with_their_values(view):
    array = view(_base())
    with pytest.raises(ValueError, match="negative"):
        torch.from_numpy(array)  # what the function works around
    tensor = as_float32(array, "cpu")
    assert torch.equal(tensor, torch.tensor(array.astype(np.float32).tolist()))
    array[...] = 0.0
    assert tensor.abs().sum() > 0, "a copy does not see later writes"


def test_a_read_only_array_is_copied_without_a_warning():
    array = np.frombuffer(np.arange(4, dtype=np.float32).tobytes(), dtype=np.float32)
    assert not array.flags.writeable
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torch.from_numpy would warn that it is not writable
        tensor = as_float32(array, "cpu")
    tensor += 1  # a tensor is writable, and the array is untouched
    assert array.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_another_device_gets_the_converted_data():
    # The meta device exists everywhere: it proves the device is honoured without a GPU.
    tensor = as_float32(np.zeros((2, 3)), "meta")
    assert tensor.device.type == "meta" and tensor.dtype == torch.float32
    assert tuple(tensor.shape) == (2, 3)


@pytest.mark.requires_cuda
def test_cuda_gets_float32_values():
    array = _base().astype(np.float64)[::-1]
    tensor = as_float32(array, "cuda")
    assert tensor.is_cuda and tensor.dtype == torch.float32
    assert torch.equal(tensor.cpu(), torch.from_numpy(array.astype(np.float32).copy()))


@pytest.mark.parametrize(
    ("array", "words"),
    [
        ([1.0, 2.0], r"array must be a NumPy array \(np.ndarray\), got list; .*torch.tensor"),
        (torch.ones(2), r"got Tensor; for a tensor use tensor.to"),
        (np.float64(2.0), r"got float64"),
        (np.array(["a", "b"]), r"booleans, integers or floats .* got dtype <U1"),
        (np.ones(2, dtype=complex), r"got dtype complex128"),
        (np.array([object()]), r"got dtype object"),
    ],
)
def test_what_is_not_a_numeric_array_is_refused_by_name(array, words):
    with pytest.raises(TypeError, match=words):
        as_float32(array, "cpu")


def test_bad_devices_are_named():
    with pytest.raises(ValueError, match=r"device must be a device name .* got 'gpu'"):
        as_float32(_base(), "gpu")
    with pytest.raises(TypeError, match=r"device must be a torch.device or a name .* got int 0"):
        as_float32(_base(), 0)
