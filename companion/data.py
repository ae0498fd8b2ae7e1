"""Offline datasets: real handwritten digits, generated shapes and variable-length sequences.

Everything here works without the network: ``digits`` is real data shipped inside companion
(scikit-learn's copy of the UCI digits, 45 KB: ``companion/datasets/README.md``),
``shapes`` and ``sequences`` are generated from a seed. The real torchvision datasets
(``fashion_mnist``, ``cifar10``) are in :mod:`companion.vision_data`; the loaders that batch
these datasets (``InMemoryLoader``, ``pad_collate``) are in :mod:`companion.loaders`.

Example:
    >>> train_ds, val_ds = digits(seed=0)
    >>> inputs, targets = train_ds.tensors
    >>> inputs.shape, targets.dtype
    (torch.Size([1438, 1, 8, 8]), torch.int64)
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import torch
from torch.utils.data import Dataset, TensorDataset

from companion._checks import check_int

_DIGITS = Path(__file__).with_name("datasets") / "digits.npz"

__all__ = [
    "DIGITS_CLASSES",
    "SHAPES_CLASSES",
    "SequenceDataset",
    "Splits",
    "digits",
    "sequences",
    "shapes",
]

DIGITS_CLASSES = tuple(str(d) for d in range(10))
SHAPES_CLASSES = ("circle", "square", "triangle")


class Splits(NamedTuple):
    """A train/validation pair of datasets; unpacks as ``train_ds, val_ds = digits()``."""

    train: Dataset
    val: Dataset


# ----------------------------------------------------------------------------- validation


def _check_fraction(val_fraction: Any) -> float:
    if isinstance(val_fraction, bool) or not isinstance(val_fraction, (int, float)):
        raise TypeError(f"val_fraction must be a float in [0, 1), got {val_fraction!r}.")
    if not 0.0 <= val_fraction < 1.0:
        raise ValueError(
            f"val_fraction must be in [0, 1), got {val_fraction!r}; "
            "use 0.2 to keep a fifth of the samples for validation, 0 for no validation set."
        )
    return float(val_fraction)


def _split_indices(
    targets: np.ndarray, val_fraction: float, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Stratified split: each class gives ``round(val_fraction * count)`` samples to val."""
    rng = np.random.default_rng([seed, 0x5B1])
    val_parts = []
    for label in np.unique(targets):
        members = np.flatnonzero(targets == label)
        k = int(round(val_fraction * len(members)))
        val_parts.append(rng.permutation(members)[:k])
    val_idx = np.sort(np.concatenate(val_parts)) if val_parts else np.zeros(0, dtype=np.int64)
    train_mask = np.ones(len(targets), dtype=bool)
    train_mask[val_idx] = False
    return np.flatnonzero(train_mask), val_idx


def _tensor_splits(
    inputs: torch.Tensor, targets: torch.Tensor, val_fraction: float, seed: int
) -> Splits:
    train_idx, val_idx = _split_indices(targets.numpy(), val_fraction, seed)
    train_idx, val_idx = torch.from_numpy(train_idx), torch.from_numpy(val_idx)
    return Splits(
        TensorDataset(inputs[train_idx], targets[train_idx]),
        TensorDataset(inputs[val_idx], targets[val_idx]),
    )


# ----------------------------------------------------------------------------- offline datasets


def digits(upscale: int | None = None, *, seed: int = 0, val_fraction: float = 0.2) -> Splits:
    """Scikit-learn's bundled handwritten digits (1797 real 8x8 images, 10 classes), offline.

    Args:
        upscale: None for the original 8x8 images, or an int factor: ``upscale=4`` gives 32x32
            images (bilinear interpolation, values kept in [0, 1]).
        seed: seeds the stratified train/validation split.
        val_fraction: share of each class kept for validation, in [0, 1).

    Returns:
        ``Splits(train, val)`` of ``TensorDataset``\\ s of ``(images, targets)``: images float32
        of shape (N, 1, 8 * upscale, 8 * upscale) in [0, 1], targets int64 in 0..9. The raw
        tensors are ``train.tensors``, ready for ``InMemoryLoader(*train.tensors, ...)``.

    Raises:
        TypeError, ValueError: for a bad ``upscale``, ``seed`` or ``val_fraction``.

    Example:
        >>> train_ds, val_ds = digits()
        >>> len(train_ds) + len(val_ds), train_ds[0][0].shape
        (1797, torch.Size([1, 8, 8]))
    """
    if upscale is not None:
        check_int("upscale", upscale, minimum=1, hint=" Use None for the original 8x8 images.")
    check_int("seed", seed, minimum=0)
    val_fraction = _check_fraction(val_fraction)
    with np.load(_DIGITS) as stored:  # shipped with companion: see datasets/README.md
        raw_images, raw_targets = stored["images"], stored["targets"]
    images = torch.from_numpy(raw_images.astype(np.float32) / 16.0).unsqueeze(1)
    if upscale not in (None, 1):
        images = torch.nn.functional.interpolate(
            images, scale_factor=upscale, mode="bilinear", align_corners=False
        ).clamp_(0.0, 1.0)
    targets = torch.from_numpy(raw_targets.astype(np.int64))
    return _tensor_splits(images.contiguous(), targets, val_fraction, seed)


def _draw_shapes(
    labels: torch.Tensor, size: int, noise: float, generator: torch.Generator
) -> torch.Tensor:
    n = len(labels)
    radius = size * (0.2 + 0.15 * torch.rand(n, generator=generator))
    cx = radius + (size - 2 * radius) * torch.rand(n, generator=generator)
    cy = radius + (size - 2 * radius) * torch.rand(n, generator=generator)
    theta = 2 * math.pi * torch.rand(n, generator=generator)
    brightness = 0.6 + 0.4 * torch.rand(n, generator=generator)
    pixel = torch.arange(size, dtype=torch.float32) + 0.5
    yy, xx = torch.meshgrid(pixel, pixel, indexing="ij")
    images = torch.empty(n, size, size)
    for start in range(0, n, 256):  # bounds the (chunk, size, size, sides) temporaries
        sl = slice(start, start + 256)
        dx = xx - cx[sl, None, None]
        dy = yy - cy[sl, None, None]
        # Signed distance to the outline, in pixels: negative inside.
        dist = torch.hypot(dx, dy) - radius[sl, None, None]
        for label, sides in ((1, 4), (2, 3)):
            rows = (labels[sl] == label).nonzero().flatten()
            if len(rows) == 0:
                continue
            j = torch.arange(sides, dtype=torch.float32)
            normals = theta[sl][rows, None] + (2 * j + 1) * math.pi / sides  # (rows, sides)
            proj = (
                dx[rows, :, :, None] * normals.cos()[:, None, None, :]
                + dy[rows, :, :, None] * normals.sin()[:, None, None, :]
            )
            apothem = radius[sl][rows] * math.cos(math.pi / sides)
            dist[rows] = proj.amax(dim=-1) - apothem[:, None, None]
        # A one-pixel ramp at the edge keeps outlines smooth (anti-aliasing).
        images[sl] = brightness[sl, None, None] * (0.5 - dist).clamp(0.0, 1.0)
    images = images + noise * torch.randn(n, size, size, generator=generator)
    return images.clamp_(0.0, 1.0).unsqueeze(1)


def shapes(
    n: int, size: int = 32, *, seed: int = 0, val_fraction: float = 0.2, noise: float = 0.1
) -> Splits:
    """Procedurally drawn circles, squares and triangles: an image task of any size, offline.

    Each image holds one filled shape of random size, position, rotation and brightness on a
    black background, plus Gaussian pixel noise. Classes (see ``SHAPES_CLASSES``):
    0 = circle, 1 = square, 2 = triangle; they are balanced. The same arguments always give the
    same images.

    Args:
        n: total number of images (train + validation), at least 1.
        size: side of the square images in pixels, at least 8.
        seed: seeds the drawing and the stratified split.
        val_fraction: share of each class kept for validation, in [0, 1).
        noise: standard deviation of the Gaussian pixel noise (0 for clean images).

    Returns:
        ``Splits(train, val)`` of ``TensorDataset``\\ s of ``(images, targets)``: images float32
        of shape (N, 1, size, size) in [0, 1], targets int64 in {0, 1, 2}.

    Raises:
        TypeError, ValueError: for a bad ``n``, ``size``, ``seed``, ``val_fraction`` or ``noise``.

    Example:
        >>> train_ds, val_ds = shapes(300, size=16, seed=0)
        >>> train_ds.tensors[0].shape
        torch.Size([240, 1, 16, 16])
    """
    n = check_int("n", n, minimum=1)
    size = check_int("size", size, minimum=8, hint=" Smaller shapes are not recognisable.")
    seed = check_int("seed", seed, minimum=0)
    val_fraction = _check_fraction(val_fraction)
    if isinstance(noise, bool) or not isinstance(noise, (int, float)):
        raise TypeError(f"noise must be a float >= 0 (a pixel standard deviation), got {noise!r}.")
    if noise < 0:
        raise ValueError(f"noise must be a float >= 0 (a pixel standard deviation), got {noise!r}.")
    generator = torch.Generator().manual_seed(seed)
    labels = (torch.arange(n) % len(SHAPES_CLASSES))[torch.randperm(n, generator=generator)]
    images = _draw_shapes(labels, size, float(noise), generator)
    return _tensor_splits(images, labels, val_fraction, seed)


class SequenceDataset(Dataset):
    """Variable-length token sequences with a class label each (what ``sequences`` returns).

    ``dataset[i]`` is ``(tokens, target)``: an int64 tensor of shape (L_i,) and an int64 scalar.
    Batch it with ``DataLoader(dataset, batch_size=..., collate_fn=pad_collate)``.

    Attributes:
        sequences: list of int64 tensors of shape (L_i,).
        targets: int64 tensor of shape (N,).
        vocab_size: number of token ids, including the padding id 0 (never used by a token).
        num_classes: number of classes.
    """

    def __init__(
        self,
        sequences: list[torch.Tensor],
        targets: torch.Tensor,
        *,
        vocab_size: int,
        num_classes: int,
    ) -> None:
        if len(sequences) != len(targets):
            raise ValueError(
                f"sequences and targets must have the same length, got {len(sequences)} "
                f"and {len(targets)}."
            )
        self.sequences = list(sequences)
        self.targets = targets
        self.vocab_size = vocab_size
        self.num_classes = num_classes

    def __len__(self) -> int:
        return len(self.sequences)

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        return self.sequences[index], self.targets[index]

    def __repr__(self) -> str:
        return (
            f"SequenceDataset(n={len(self)}, vocab_size={self.vocab_size}, "
            f"num_classes={self.num_classes})"
        )


def sequences(
    n: int,
    *,
    seed: int = 0,
    val_fraction: float = 0.2,
    min_len: int = 5,
    max_len: int = 30,
    num_classes: int = 3,
    tokens_per_class: int = 4,
) -> Splits:
    """A variable-length sequence classification task: which token group dominates?

    Token ids ``1 .. num_classes * tokens_per_class`` are split into ``num_classes`` groups of
    ``tokens_per_class`` consecutive ids (group ``c`` holds ids ``1 + c * tokens_per_class``
    onward); id 0 is left free for padding. The label of a sequence is the group that holds
    strictly more of its tokens than any other group. A mean-pooled embedding or a small GRU
    learns it in a few epochs; lengths vary uniformly in ``[min_len, max_len]``.

    Args:
        n: total number of sequences (train + validation), at least 1.
        seed: seeds the generation and the stratified split.
        val_fraction: share of each class kept for validation, in [0, 1).
        min_len: shortest sequence length, at least 1.
        max_len: longest sequence length, at least ``min_len``.
        num_classes: number of classes (token groups), at least 2.
        tokens_per_class: distinct token ids per group, at least 1.

    Returns:
        ``Splits(train, val)`` of ``SequenceDataset``\\ s; each sample is ``(tokens, target)``
        with tokens int64 of shape (L,) and target an int64 scalar.
        ``vocab_size = 1 + num_classes * tokens_per_class``.

    Raises:
        TypeError, ValueError: for bad sizes, lengths or counts.

    Example:
        >>> train_ds, val_ds = sequences(500, seed=0)
        >>> tokens, target = train_ds[0]
        >>> tokens.dtype, train_ds.vocab_size, train_ds.num_classes
        (torch.int64, 13, 3)
    """
    n = check_int("n", n, minimum=1)
    seed = check_int("seed", seed, minimum=0)
    val_fraction = _check_fraction(val_fraction)
    min_len = check_int("min_len", min_len, minimum=1)
    max_len = check_int("max_len", max_len, minimum=min_len, hint=" It must be >= min_len.")
    num_classes = check_int("num_classes", num_classes, minimum=2)
    tokens_per_class = check_int("tokens_per_class", tokens_per_class, minimum=1)
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.arange(n) % num_classes)
    lengths = rng.integers(min_len, max_len + 1, size=n)
    seqs = []
    for label, length in zip(labels, lengths):
        while True:  # redraw the rare ties so that every label is unambiguous
            own = rng.random(length) < 0.5
            other = (label + rng.integers(1, num_classes, size=length)) % num_classes
            groups = np.where(own, label, other)
            counts = np.bincount(groups, minlength=num_classes)
            if counts[label] > np.delete(counts, label).max():
                break
        tokens = 1 + groups * tokens_per_class + rng.integers(0, tokens_per_class, size=length)
        seqs.append(torch.from_numpy(tokens.astype(np.int64)))
    targets = torch.from_numpy(labels.astype(np.int64))
    train_idx, val_idx = _split_indices(labels, val_fraction, seed)
    meta = {"vocab_size": 1 + num_classes * tokens_per_class, "num_classes": num_classes}
    return Splits(
        SequenceDataset([seqs[i] for i in train_idx], targets[train_idx], **meta),
        SequenceDataset([seqs[i] for i in val_idx], targets[val_idx], **meta),
    )
