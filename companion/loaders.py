"""Batching: padding for variable-length samples, and a fast in-memory loader.

``pad_collate`` is a DataLoader ``collate_fn`` that pads variable-length ``(sequence, target)``
samples and adds a mask.

``InMemoryLoader`` batches tensors that already sit in memory (optionally already on the device)
without any per-sample Python work, and saves/restores its shuffling state so that a resumed run
sees exactly the batches an uninterrupted one would have seen.

Example:
    >>> from companion.data import digits
    >>> train_ds, val_ds = digits(seed=0)
    >>> train_loader = InMemoryLoader(*train_ds.tensors, batch_size=32, seed=0)
    >>> inputs, targets = next(iter(train_loader))
    >>> inputs.shape, targets.dtype
    (torch.Size([32, 1, 8, 8]), torch.int64)
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import torch
from torch.utils.data import default_collate

from companion._checks import check_bool, check_int

__all__ = ["InMemoryLoader", "pad_collate"]


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


def _is_class_id(target: Any) -> bool:
    """An int, a NumPy integer or an integer tensor of shape () (bools are not class ids)."""
    if isinstance(target, torch.Tensor):
        return target.ndim == 0 and not (
            target.is_floating_point() or target.is_complex() or target.dtype == torch.bool
        )
    return isinstance(target, (int, np.integer)) and not isinstance(target, (bool, np.bool_))


class InMemoryLoader:
    """Batches sliced from tensors already in memory, reproducible and resumable.

    A drop-in for ``DataLoader(TensorDataset(*tensors), batch_size, shuffle)`` when the data fits
    in memory: each batch is one ``index_select`` per tensor, with no per-sample Python work and
    no collate step. Iterating yields tuples of tensors (``(inputs, targets)`` for two tensors).

    Each ``iter(loader)`` starts an epoch: it draws a fresh permutation from the loader's own
    ``torch.Generator`` right away (not at the first batch). ``state_dict()`` saves that
    generator, so after ``load_state_dict(state)`` the next ``iter()`` yields exactly the order it
    would have yielded when ``state`` was taken; take the state between epochs (just before
    ``iter``), then skip the batches already done. The global RNG is never touched.

    Args:
        *tensors: one or more tensors with the same first (sample) dimension, on one device.
        batch_size: samples per batch, a positive int.
        shuffle: draw a new order each epoch (True) or keep the stored order (False).
        seed: seeds the loader's generator.
        drop_last: drop the last batch when it is smaller than ``batch_size``.
        device: where to keep the tensors; they are moved once, here, not per batch.

    Raises:
        TypeError, ValueError: for bad arguments; the message says what was expected.

    Example:
        >>> inputs, targets = torch.randn(100, 3), torch.randint(0, 2, (100,))
        >>> loader = InMemoryLoader(inputs, targets, batch_size=32, seed=0)
        >>> len(loader), [len(xb) for xb, yb in loader]
        (4, [32, 32, 32, 4])
        >>> state = loader.state_dict()
        >>> first = [yb for _, yb in loader]
        >>> loader.load_state_dict(state)
        >>> all(torch.equal(a, b) for a, (_, b) in zip(first, loader))
        True
    """

    def __init__(
        self,
        *tensors: torch.Tensor,
        batch_size: int,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
        device: torch.device | str | None = None,
    ) -> None:
        if not tensors:
            raise ValueError(
                "InMemoryLoader needs at least one tensor, e.g. InMemoryLoader(inputs, targets, "
                "batch_size=32)."
            )
        for i, t in enumerate(tensors):
            if isinstance(t, torch.utils.data.TensorDataset):
                raise TypeError(
                    f"tensors[{i}] is a TensorDataset; InMemoryLoader takes its tensors: "
                    f"InMemoryLoader(*dataset.tensors, batch_size={batch_size!r})."
                )
            if isinstance(t, torch.utils.data.Dataset):
                raise TypeError(
                    f"tensors[{i}] is a {type(t).__name__} (a Dataset); InMemoryLoader takes "
                    f"tensors that hold every sample, e.g. InMemoryLoader(inputs, targets, "
                    f"batch_size=...). For a Dataset, stack its samples first or use a DataLoader."
                )
            if not isinstance(t, torch.Tensor):
                raise TypeError(
                    f"tensors[{i}] must be a torch.Tensor, got {type(t).__name__}; convert it "
                    "with torch.as_tensor(...) first."
                )
            if t.ndim == 0:
                raise ValueError(f"tensors[{i}] is a scalar; each tensor needs a sample dimension.")
        sizes = [len(t) for t in tensors]
        if len(set(sizes)) != 1:
            raise ValueError(
                f"all tensors must have the same first (sample) dimension, got sizes {sizes}."
            )
        if sizes[0] == 0:
            raise ValueError("the tensors hold no samples (first dimension 0).")
        self.batch_size = check_int("batch_size", batch_size, minimum=1)
        self.shuffle = check_bool("shuffle", shuffle)
        self.drop_last = check_bool("drop_last", drop_last)
        self.seed = check_int("seed", seed, minimum=0)
        if device is not None:
            device = torch.device(device)
            tensors = tuple(t.to(device) for t in tensors)
        devices = {t.device for t in tensors}
        if len(devices) != 1:
            raise ValueError(
                f"the tensors sit on different devices {sorted(map(str, devices))}; pass "
                "device=... to move them all to one."
            )
        self.tensors = tuple(tensors)
        self.device = tensors[0].device
        self.num_samples = sizes[0]
        if self.drop_last and self.num_samples < self.batch_size:
            raise ValueError(
                f"drop_last=True with {self.num_samples} samples and batch_size={self.batch_size} "
                "leaves no batch; lower batch_size or set drop_last=False."
            )
        self.epoch = 0
        self._generator = torch.Generator().manual_seed(self.seed)

    def __len__(self) -> int:
        if self.drop_last:
            return self.num_samples // self.batch_size
        return math.ceil(self.num_samples / self.batch_size)

    def __iter__(self) -> Iterator[tuple[torch.Tensor, ...]]:
        return self.iter_from(0)

    def iter_from(self, start_batch: int) -> Iterator[tuple[torch.Tensor, ...]]:
        """Start an epoch as ``iter(loader)`` does, but yield its batches from ``start_batch`` on.

        The epoch's whole order is drawn, so the generator advances exactly as with ``iter``;
        the skipped batches are never gathered. ``fit`` resumes mid-epoch with it.

        Args:
            start_batch: batches of the epoch to leave out, an int >= 0.

        Example:
            >>> loader = InMemoryLoader(torch.arange(10), batch_size=4, shuffle=False)
            >>> [ids.tolist() for (ids,) in loader.iter_from(1)]
            [[4, 5, 6, 7], [8, 9]]
        """
        start_batch = check_int("start_batch", start_batch, minimum=0)
        if self.shuffle:
            order = torch.randperm(self.num_samples, generator=self._generator)
        else:
            order = torch.arange(self.num_samples)
        self.epoch += 1
        return self._batches(order.to(self.device), start_batch)

    def _batches(self, order: torch.Tensor, start: int) -> Iterator[tuple[torch.Tensor, ...]]:
        # One small gather per batch: a single big permuted copy per epoch would double the
        # memory, and its multi-threaded gather stalls when other processes share the cores.
        for index in order[: len(self) * self.batch_size].split(self.batch_size)[start:]:
            yield tuple(t.index_select(0, index) for t in self.tensors)

    def state_dict(self) -> dict[str, Any]:
        """The shuffling state as a plain dict (tensors and ints), safe for ``weights_only``.

        Returns:
            ``{"generator", "epoch", "seed", "num_samples", "batch_size", "shuffle",
            "drop_last"}``; restore it with ``load_state_dict``.

        Example:
            >>> loader = InMemoryLoader(torch.arange(10), batch_size=4)
            >>> sorted(loader.state_dict())[:2]
            ['batch_size', 'drop_last']
        """
        return {
            "generator": self._generator.get_state(),
            "epoch": self.epoch,
            "seed": self.seed,
            "num_samples": self.num_samples,
            "batch_size": self.batch_size,
            "shuffle": self.shuffle,
            "drop_last": self.drop_last,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a ``state_dict()``: the next ``iter()`` repeats the order saved in it.

        Args:
            state: a dict from ``state_dict()`` (possibly through ``torch.save``/``torch.load``).

        Raises:
            TypeError: when ``state`` is not such a dict.
            ValueError: when it was saved from a loader with other data size or batching, whose
                batches would not line up with this one's.

        Example:
            >>> loader = InMemoryLoader(torch.arange(10), batch_size=4)
            >>> loader.load_state_dict(loader.state_dict())
        """
        keys = ("generator", "epoch", "num_samples", "batch_size", "shuffle", "drop_last")
        if not isinstance(state, dict) or any(k not in state for k in keys):
            raise TypeError(
                f"state must be a dict from InMemoryLoader.state_dict() with keys {list(keys)}, "
                f"got {type(state).__name__}"
                f"{' with keys ' + str(sorted(state)) if isinstance(state, dict) else ''}."
            )
        for key in ("num_samples", "batch_size", "shuffle", "drop_last"):
            if state[key] != getattr(self, key):
                raise ValueError(
                    f"the state was saved from a loader with {key}={state[key]!r}, but this loader "
                    f"has {key}={getattr(self, key)!r}; build the loader with the same data and "
                    "arguments before restoring its state."
                )
        self._generator.set_state(torch.as_tensor(state["generator"]).cpu().to(torch.uint8))
        self.epoch = int(state["epoch"])
        self.seed = int(state.get("seed", self.seed))

    def __repr__(self) -> str:
        shapes_ = ", ".join(str(tuple(t.shape)) for t in self.tensors)
        return (
            f"InMemoryLoader({shapes_}, batch_size={self.batch_size}, shuffle={self.shuffle}, "
            f"seed={self.seed}, drop_last={self.drop_last}, device={str(self.device)!r})"
        )
