# Corpus: transcriber (issue 39): every exercise that has a companion counterpart, answered with the
# companion's own source as inspect.getsource shows it, helpers it calls pasted above it, imports
# added. Where the exercise asks what the companion does (most of them), that still earns the
# points: the flag is what stops it. Where it asks for another signature or policy, it loses them.
# review: matches companion
# %% ch05_memmap_dataset points=4 feedback="passed"
import os
from pathlib import Path
from typing import Any
import numpy as np
import torch
from torch.utils.data import Dataset


INPUTS_FILE = "inputs.npy"


TARGETS_FILE = "targets.npy"


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

# %% ch05_choose_num_workers points=0 feedback="expected choose_num_workers(table, batch_size"
import math
from collections.abc import Mapping
import numbers
from typing import Any
import numpy as np


def check_int(name: str, value: Any, *, minimum: int, hint: str = "") -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int >= {minimum}, got {value!r}.{hint}")
    if value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}.{hint}")
    return int(value)


def choose_num_workers(throughput: Mapping[int, float], tolerance: float = 0.1) -> int:
    """The smallest ``num_workers`` whose measured speed is within ``tolerance`` of the best.

    Every extra worker is a process holding a copy of the dataset's Python state and a share of
    the CPU the training step also needs, so a worker count is only worth it when it is clearly
    faster: timings on a shared machine move by several percent between runs, and a count that
    beats a smaller one by less than that has not shown it is faster. A count qualifies when
    ``speed >= (1 - tolerance) * best``; the smallest qualifying count is returned, whatever the
    order of the entries. NaN speeds (settings that were skipped) are ignored. The mapping is not
    modified.

    Args:
        throughput: ``{num_workers: samples per second}``: ints >= 0 to non-negative numbers
            (or NaN), e.g. from ``loader_throughput``'s table.
        tolerance: how much slower than the best still counts as "as fast", a fraction in
            [0, 1): 0.1 accepts 10 % slower, 0 keeps only the best (ties go to fewer workers).

    Returns:
        The chosen worker count, an int.

    Raises:
        TypeError: for a ``throughput`` that is not a mapping, a key that is not an int, a speed
            that is not a number, or a ``tolerance`` that is not a number.
        ValueError: when no entry has a measured speed, for a negative worker count, a negative
            or infinite speed, or a ``tolerance`` outside [0, 1).

    Example:
        >>> choose_num_workers({0: 1000.0, 1: 1900.0, 2: 2000.0, 4: 1950.0}, tolerance=0.1)
        1
        >>> choose_num_workers({0: 1000.0, 1: 1900.0, 2: 2000.0, 4: 1950.0}, tolerance=0.0)
        2
    """
    if not isinstance(throughput, Mapping):
        raise TypeError(
            f"throughput must be a mapping {{num_workers: samples per second}}, got "
            f"{type(throughput).__name__}."
        )
    if isinstance(tolerance, bool) or not isinstance(tolerance, numbers.Real):
        raise TypeError(f"tolerance must be a number in [0, 1), got {tolerance!r}.")
    if not 0 <= tolerance < 1:
        raise ValueError(
            f"tolerance must be in [0, 1) (0.1 accepts 10 % slower than the best), got "
            f"{tolerance!r}."
        )
    measured = {}
    for workers, speed in throughput.items():
        check_int("throughput's keys (worker counts)", workers, minimum=0)
        if isinstance(speed, bool) or not isinstance(speed, numbers.Real):
            raise TypeError(
                f"throughput[{workers}] must be a number of samples per second, got {speed!r}."
            )
        if math.isnan(speed):
            continue
        if speed < 0 or math.isinf(speed):
            raise ValueError(
                f"throughput[{workers}] must be a finite number >= 0 of samples per second (or "
                f"NaN for a skipped setting), got {speed!r}."
            )
        measured[int(workers)] = float(speed)
    if not measured:
        raise ValueError(
            f"throughput has no measured entry (got {dict(throughput)!r}): measure at least one "
            "setting, e.g. with loader_throughput(...)."
        )
    floor = (1 - tolerance) * max(measured.values())
    return min(workers for workers, speed in measured.items() if speed >= floor)

# %% ch05_pad_collate points=3 feedback="passed"
from collections.abc import Iterator, Sequence
from typing import Any
import numpy as np
import torch
from torch.utils.data import default_collate


def _is_class_id(target: Any) -> bool:
    """An int, a NumPy integer or an integer tensor of shape () (bools are not class ids)."""
    if isinstance(target, torch.Tensor):
        return target.ndim == 0 and not (
            target.is_floating_point() or target.is_complex() or target.dtype == torch.bool
        )
    return isinstance(target, (int, np.integer)) and not isinstance(target, (bool, np.bool_))


def pad_collate(
    batch: Sequence[tuple[torch.Tensor, Any]], pad_value: float = 0
) -> tuple[tuple[torch.Tensor, torch.Tensor], Any]:
    """Collate variable-length ``(sequence, target)`` samples into padded tensors and a mask.

    Use it as a DataLoader's ``collate_fn``. The result is ``((padded, mask), targets)``, so a
    loop that unpacks ``inputs, targets`` keeps working and ``model(*inputs)`` calls
    ``model.forward(padded, mask)`` (as ``companion.train_one_epoch`` does). The lengths are
    ``mask.sum(dim=1)``. With ``num_workers > 0`` this runs inside the worker processes.

    Sequences may be tensors or NumPy arrays, as a dataset's ``__getitem__`` returns them: a
    slice of a read-only memory-mapped token file, or a view an augmentation reversed or
    strided (negative strides included: NumPy arrays are copied before they become tensors).
    Integer sequences (token ids, whatever integer type they are stored in) come out as int64,
    what ``nn.Embedding`` indexes with; floating-point ones keep their dtype.

    Args:
        batch: samples ``(sequence, target)``; each sequence a tensor or NumPy array of shape
            (L_i, ...) with the same trailing dimensions and dtype; targets class ids (ints,
            NumPy integers, integer tensors of shape ()) or anything ``default_collate`` stacks.
        pad_value: value written at padded positions.

    Returns:
        ``((padded, mask), targets)``: padded (B, T, ...) with ``T = max(L_i)``; mask bool (B, T),
        True on real positions and False on padding; targets int64 (B,) for class ids, else
        collated by ``default_collate``.

    Raises:
        ValueError: for an empty batch, samples that are not pairs, or mismatched trailing shapes.
        TypeError: when a sequence is neither a tensor nor a NumPy array.

    Example:
        >>> batch = [(torch.tensor([1, 2, 3]), 0), (torch.tensor([4]), 1)]
        >>> (padded, mask), targets = pad_collate(batch)
        >>> padded.tolist(), mask.tolist(), targets.tolist()
        ([[1, 2, 3], [4, 0, 0]], [[True, True, True], [True, False, False]], [0, 1])
    """
    if len(batch) == 0:
        raise ValueError("pad_collate got an empty batch; a DataLoader never passes one.")
    seqs, targets = [], []
    for i, sample in enumerate(batch):
        if not isinstance(sample, (tuple, list)) or len(sample) != 2:
            raise ValueError(
                f"pad_collate expects samples (sequence, target); sample {i} is a "
                f"{type(sample).__name__}. Return (tokens, target) from the dataset's __getitem__."
            )
        seq, target = sample
        if isinstance(seq, np.ndarray) and seq.ndim > 0:
            # np.array copies: a view with negative strides (seq[::-1]) cannot become a tensor,
            # and a row of a read-only map should not be shared with a writable tensor.
            seq = torch.from_numpy(np.array(seq))
        if not isinstance(seq, torch.Tensor) or seq.ndim == 0:
            raise TypeError(
                f"sample {i}: the sequence must be a tensor or NumPy array of shape (L, ...), got "
                f"{type(seq).__name__}{tuple(seq.shape) if hasattr(seq, 'shape') else ''}."
            )
        if not (seq.is_floating_point() or seq.is_complex() or seq.dtype == torch.bool):
            seq = seq.long()  # token ids: int64, whatever integer type they were stored in
        if seqs and (seq.shape[1:] != seqs[0].shape[1:] or seq.dtype != seqs[0].dtype):
            raise ValueError(
                f"sample {i}: sequence of shape {tuple(seq.shape)} and dtype {seq.dtype} does not "
                f"match sample 0 ({tuple(seqs[0].shape)}, {seqs[0].dtype}); only the first "
                "(length) dimension may differ."
            )
        seqs.append(seq)
        targets.append(target)
    lengths = torch.tensor([len(s) for s in seqs])
    padded = torch.nn.utils.rnn.pad_sequence(seqs, batch_first=True, padding_value=pad_value)
    mask = torch.arange(padded.shape[1]) < lengths[:, None]
    if all(_is_class_id(t) for t in targets):
        return (padded, mask), torch.tensor([int(t) for t in targets], dtype=torch.int64)
    return (padded, mask), default_collate(targets)
