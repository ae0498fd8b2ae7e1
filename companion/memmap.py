"""Datasets that stay on disk: write arrays once, then read samples lazily through a memory map.

``write_memmap_dataset`` stores inputs and targets as two ``.npy`` files in a folder.
``MemmapDataset`` reads them back one sample at a time: the inputs stay on disk (the operating
system pages in only the rows that are read), the dataset pickles without them, so worker
processes started with ``spawn`` receive a folder name rather than a copy of the data, and each
process opens its own map the first time it reads.

Example:
    >>> import tempfile
    >>> folder = write_memmap_dataset(tempfile.mkdtemp(), torch.rand(10, 3), torch.arange(10))
    >>> dataset = MemmapDataset(folder)
    >>> x, y = dataset[4]
    >>> len(dataset), x.dtype, y.dtype, y.item()
    (10, torch.float32, torch.int64, 4)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.utils.data import Dataset

__all__ = ["INPUTS_FILE", "TARGETS_FILE", "MemmapDataset", "write_memmap_dataset"]

INPUTS_FILE = "inputs.npy"
TARGETS_FILE = "targets.npy"


def _as_array(name: str, value: Any) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    if isinstance(value, np.ndarray):
        return value
    raise TypeError(
        f"{name} must be a torch.Tensor or a numpy.ndarray, got {type(value).__name__}."
    )


def write_memmap_dataset(
    folder: str | os.PathLike, inputs: torch.Tensor | np.ndarray, targets: torch.Tensor | np.ndarray
) -> Path:
    """Write ``inputs`` and ``targets`` to ``folder`` as ``inputs.npy`` and ``targets.npy``.

    The dtypes are kept as given: store images as ``uint8`` to make the file four times smaller
    than float32, and let :class:`MemmapDataset` convert each sample when it is read. Each file
    is written under a temporary name and renamed, so a crash never leaves a half-written file
    under the final name. The folder is created if needed.

    Args:
        folder: where the two files go.
        inputs: (N, ...) numbers (integers or floats), N >= 1.
        targets: (N,) integer class ids.

    Returns:
        The folder, as a ``Path``.

    Raises:
        TypeError: when ``inputs`` or ``targets`` is not a tensor or an array.
        ValueError: for inputs without a sample dimension or of a non-numeric dtype, targets that
            are not one integer per sample, or different sample counts.

    Example:
        >>> import tempfile
        >>> folder = write_memmap_dataset(tempfile.mkdtemp(), torch.zeros(4, 2), torch.arange(4))
        >>> sorted(p.name for p in folder.iterdir())
        ['inputs.npy', 'targets.npy']
    """
    inputs = _as_array("inputs", inputs)
    targets = _as_array("targets", targets)
    if inputs.ndim == 0 or len(inputs) == 0:
        raise ValueError(
            f"inputs must have shape (N, ...) with N >= 1 samples, got shape {inputs.shape}."
        )
    if inputs.dtype.kind not in "biuf":
        raise ValueError(f"inputs must hold numbers (ints or floats), got dtype {inputs.dtype}.")
    if targets.ndim != 1 or targets.dtype.kind not in "iu":
        raise ValueError(
            f"targets must be one integer class id per sample, shape (N,), got shape "
            f"{targets.shape} and dtype {targets.dtype}."
        )
    if len(targets) != len(inputs):
        raise ValueError(
            f"inputs and targets must have the same number of samples, got {len(inputs)} inputs "
            f"and {len(targets)} targets."
        )
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for name, array in ((INPUTS_FILE, inputs), (TARGETS_FILE, targets)):
        partial = folder / f".{name}.partial"
        with open(partial, "wb") as handle:
            np.save(handle, np.ascontiguousarray(array))
        os.replace(partial, folder / name)
    return folder


class MemmapDataset(Dataset):
    """Samples read lazily from a folder written by :func:`write_memmap_dataset`.

    ``dataset[i]`` is ``(x, y)``: ``x`` the i-th row of ``inputs.npy`` as a float32 tensor with
    its own memory (changing it changes neither the file nor later reads), ``y`` the i-th target
    as an int64 scalar tensor. The targets (one number per sample) are read once, here; the
    inputs are memory-mapped on the first read in each process and never copied as a whole.
    Pickling the dataset (what ``DataLoader`` does for each worker started with ``spawn``) carries
    the folder and the targets, not the inputs or the open map.

    Args:
        folder: a folder holding ``inputs.npy`` (N, ...) of numbers and ``targets.npy`` (N,) of
            integers.

    Attributes:
        folder: the folder. targets: int64 tensor (N,). sample_shape: the shape of one input.
        dtype: the inputs' dtype on disk.

    Raises:
        FileNotFoundError: when the folder or one of the two files is missing.
        ValueError: when the files do not hold numeric inputs and one integer target per input.

    Example:
        >>> import tempfile
        >>> pixels = torch.randint(0, 256, (6, 1, 4, 4), dtype=torch.uint8)
        >>> folder = write_memmap_dataset(tempfile.mkdtemp(), pixels, torch.arange(6) % 2)
        >>> x, y = MemmapDataset(folder)[5]
        >>> x.shape, x.dtype, y
        (torch.Size([1, 4, 4]), torch.float32, tensor(1))
    """

    def __init__(self, folder: str | os.PathLike) -> None:
        folder = Path(folder)
        missing = [name for name in (INPUTS_FILE, TARGETS_FILE) if not (folder / name).is_file()]
        if missing:
            raise FileNotFoundError(
                f"folder {str(folder)!r} must hold {INPUTS_FILE} and {TARGETS_FILE}; "
                f"{' and '.join(missing)} not found there. Write them with "
                "companion.write_memmap_dataset(folder, inputs, targets)."
            )
        inputs = np.load(folder / INPUTS_FILE, mmap_mode="r")  # reads the header only
        if inputs.ndim == 0 or inputs.dtype.kind not in "biuf":
            raise ValueError(
                f"{folder / INPUTS_FILE} must hold numbers of shape (N, ...), got shape "
                f"{inputs.shape} and dtype {inputs.dtype}."
            )
        targets = np.load(folder / TARGETS_FILE)
        if targets.shape != (len(inputs),) or targets.dtype.kind not in "iu":
            raise ValueError(
                f"{folder / TARGETS_FILE} must hold one integer per input, shape ({len(inputs)},); "
                f"got shape {targets.shape} and dtype {targets.dtype}."
            )
        self.folder = folder
        self.targets = torch.from_numpy(targets.astype(np.int64))
        self.sample_shape = tuple(inputs.shape[1:])
        self.dtype = inputs.dtype
        self._inputs: np.ndarray | None = None  # opened by the first read in each process

    def __len__(self) -> int:
        return len(self.targets)

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
            raise TypeError(f"index must be an int, got {type(index).__name__}.")
        n = len(self)
        if not -n <= index < n:
            raise IndexError(f"index {index} is out of range for a dataset of {n} samples.")
        if self._inputs is None:
            self._inputs = np.load(self.folder / INPUTS_FILE, mmap_mode="r")
        # np.array copies the row out of the read-only map: the tensor owns its memory.
        x = torch.from_numpy(np.array(self._inputs[index], dtype=np.float32))
        return x, self.targets[index].clone()

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_inputs"] = None  # a pickled map would carry every byte of the file
        return state

    def __repr__(self) -> str:
        return (
            f"MemmapDataset({str(self.folder)!r}, n={len(self)}, sample_shape={self.sample_shape},"
            f" dtype={self.dtype})"
        )
