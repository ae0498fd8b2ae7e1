"""Offline datasets, padding for variable-length samples, and a fast in-memory loader.

Everything here works without the network: ``digits`` is real data bundled with scikit-learn,
``shapes`` and ``sequences`` are generated from a seed. ``fashion_mnist`` and ``cifar10`` are the
real torchvision loaders, used when their files are on disk (or the learner is online).

``InMemoryLoader`` batches tensors that already sit in memory (optionally already on the device)
without any per-sample Python work, and saves/restores its shuffling state so that a resumed run
sees exactly the batches an uninterrupted one would have seen.

Example:
    >>> train_ds, val_ds = digits(seed=0)
    >>> train_loader = InMemoryLoader(*train_ds.tensors, batch_size=32, seed=0)
    >>> inputs, targets = next(iter(train_loader))
    >>> inputs.shape, targets.dtype
    (torch.Size([32, 1, 8, 8]), torch.int64)
"""

from __future__ import annotations

import gzip
import math
import os
import shutil
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import torch
from torch.utils.data import Dataset, TensorDataset, default_collate

__all__ = [
    "DIGITS_CLASSES",
    "SHAPES_CLASSES",
    "InMemoryLoader",
    "SequenceDataset",
    "Splits",
    "ThroughputTable",
    "cifar10",
    "digits",
    "fashion_mnist",
    "image_tensors",
    "loader_throughput",
    "pad_collate",
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


def _check_int(name: str, value: Any, *, minimum: int, hint: str = "") -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int >= {minimum}, got {value!r}.{hint}")
    if value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}.{hint}")
    return int(value)


def _check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {value!r}.")
    return value


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
    from sklearn.datasets import load_digits

    if upscale is not None:
        _check_int("upscale", upscale, minimum=1, hint=" Use None for the original 8x8 images.")
    _check_int("seed", seed, minimum=0)
    val_fraction = _check_fraction(val_fraction)
    bunch = load_digits()
    images = torch.from_numpy(bunch.images.astype(np.float32) / 16.0).unsqueeze(1)
    if upscale not in (None, 1):
        images = torch.nn.functional.interpolate(
            images, scale_factor=upscale, mode="bilinear", align_corners=False
        ).clamp_(0.0, 1.0)
    targets = torch.from_numpy(bunch.target.astype(np.int64))
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
    n = _check_int("n", n, minimum=1)
    size = _check_int("size", size, minimum=8, hint=" Smaller shapes are not recognisable.")
    seed = _check_int("seed", seed, minimum=0)
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
    n = _check_int("n", n, minimum=1)
    seed = _check_int("seed", seed, minimum=0)
    val_fraction = _check_fraction(val_fraction)
    min_len = _check_int("min_len", min_len, minimum=1)
    max_len = _check_int("max_len", max_len, minimum=min_len, hint=" It must be >= min_len.")
    num_classes = _check_int("num_classes", num_classes, minimum=2)
    tokens_per_class = _check_int("tokens_per_class", tokens_per_class, minimum=1)
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


# ----------------------------------------------------------------------------- torchvision


def _missing_files_error(
    name: str, folder: Path, missing: list[str], how: str
) -> FileNotFoundError:
    return FileNotFoundError(
        f"{name} files not found in '{folder}': missing {', '.join(missing)}. {how} "
        "Offline, companion.data.digits() and companion.data.shapes() need no files."
    )


def fashion_mnist(
    root: str | os.PathLike,
    train: bool = True,
    download: bool = False,
    transform: Callable | None = None,
    target_transform: Callable | None = None,
) -> Dataset:
    """The real ``torchvision.datasets.FashionMNIST`` (28x28 grey clothes, 10 classes).

    Files are expected in ``root/FashionMNIST/raw/``: the four idx-ubyte files
    ``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte``, ``t10k-images-idx3-ubyte`` and
    ``t10k-labels-idx1-ubyte`` (torchvision wants all four, whichever split you load). Where only
    their ``.gz`` archives are there, they are decompressed next to them first, as torchvision's
    own download does.

    Args:
        root: folder that holds (or will hold) ``FashionMNIST/``.
        train: True for the 60000 training images, False for the 10000 test images.
        download: True to let torchvision download the files (needs the network, about 30 MB).
        transform: applied to each PIL image, as in torchvision, e.g. ``v2.Compose([v2.ToImage(),
            v2.ToDtype(torch.float32, scale=True)])``; None returns PIL images. For all images
            as tensors in memory use ``image_tensors(dataset)``.
        target_transform: applied to each integer label.

    Returns:
        The ``torchvision.datasets.FashionMNIST`` dataset (``.data`` uint8 (N, 28, 28),
        ``.targets`` int64 (N,), ``.classes`` the 10 names).

    Raises:
        FileNotFoundError: with ``download=False`` and files missing; the message names the
            folder and how to get the files.

    Example:
        >>> ds = fashion_mnist("data")  # doctest: +SKIP
        >>> images, targets = image_tensors(ds)  # doctest: +SKIP
    """
    from torchvision.datasets import FashionMNIST

    _check_bool("train", train)
    _check_bool("download", download)
    root = Path(root).expanduser()
    raw = root / "FashionMNIST" / "raw"
    if not download:
        names = [os.path.splitext(os.path.basename(url))[0] for url, _ in FashionMNIST.resources]
        for name in names:
            archive = raw / f"{name}.gz"
            if not (raw / name).is_file() and archive.is_file():
                with gzip.open(archive, "rb") as src, open(raw / name, "wb") as dst:
                    shutil.copyfileobj(src, dst)
        missing = [name for name in names if not (raw / name).is_file()]
        if missing:
            raise _missing_files_error(
                "FashionMNIST",
                raw,
                missing,
                f"Call fashion_mnist({str(root)!r}, download=True) once while online, or copy "
                "the four files (or their .gz archives) from "
                f"https://github.com/zalandoresearch/fashion-mnist (data/fashion) into '{raw}'.",
            )
    return FashionMNIST(
        str(root),
        train=train,
        download=download,
        transform=transform,
        target_transform=target_transform,
    )


def cifar10(
    root: str | os.PathLike,
    train: bool = True,
    download: bool = False,
    transform: Callable | None = None,
    target_transform: Callable | None = None,
) -> Dataset:
    """The real ``torchvision.datasets.CIFAR10`` (32x32 colour images, 10 classes).

    Files are expected in ``root/cifar-10-batches-py/``: ``data_batch_1`` .. ``data_batch_5``,
    ``test_batch`` and ``batches.meta``, the pickled batches of the official
    ``cifar-10-python.tar.gz``. Torchvision checks the MD5 checksum of every one of them (all
    seven, whichever split you load), so only the official files load.

    Args:
        root: folder that holds (or will hold) ``cifar-10-batches-py/``.
        train: True for the 50000 training images, False for the 10000 test images.
        download: True to let torchvision download the archive (needs the network, ~170 MB).
        transform: applied to each PIL image, as in torchvision; None returns PIL images. For
            tensors in memory use ``image_tensors(dataset)``.
        target_transform: applied to each integer label.

    Returns:
        The ``torchvision.datasets.CIFAR10`` dataset (``.data`` uint8 numpy (N, 32, 32, 3),
        ``.targets`` list of ints, ``.classes`` the 10 names).

    Raises:
        FileNotFoundError: with ``download=False`` and files missing; the message names the
            folder and how to get the files.
        ValueError: when files are there but their checksums differ from the official ones.

    Example:
        >>> ds = cifar10("data", train=False)  # doctest: +SKIP
        >>> images, targets = image_tensors(ds)  # (10000, 3, 32, 32), (10000,)  # doctest: +SKIP
    """
    from torchvision.datasets import CIFAR10
    from torchvision.datasets.utils import check_integrity

    _check_bool("train", train)
    _check_bool("download", download)
    root = Path(root).expanduser()
    folder = root / CIFAR10.base_folder
    expected = [(name, md5) for name, md5 in CIFAR10.train_list + CIFAR10.test_list]
    expected.append((CIFAR10.meta["filename"], CIFAR10.meta["md5"]))
    if not download:
        missing = [name for name, _ in expected if not (folder / name).is_file()]
        if missing:
            raise _missing_files_error(
                "CIFAR-10",
                folder,
                missing,
                f"Call cifar10({str(root)!r}, download=True) once while online, or download "
                f"{CIFAR10.url} and extract it into '{root}' (it creates {CIFAR10.base_folder}/).",
            )
    try:
        return CIFAR10(
            str(root),
            train=train,
            download=download,
            transform=transform,
            target_transform=target_transform,
        )
    except RuntimeError as err:
        corrupted = [
            name
            for name, md5 in expected
            if (folder / name).is_file() and not check_integrity(str(folder / name), md5)
        ]
        if not corrupted:
            raise
        raise ValueError(
            f"CIFAR-10 files in '{folder}' do not match the official MD5 checksums: "
            f"{', '.join(corrupted)}. Delete the folder and download the archive again "
            f"({CIFAR10.url}, or download=True)."
        ) from err


def image_tensors(dataset: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """All images and targets of a torchvision image dataset as two tensors, ready for training.

    Works with datasets that keep their images in ``.data`` and labels in ``.targets``
    (``fashion_mnist``, ``cifar10``, and torchvision's MNIST family). The conversion is one
    vectorised operation; no transform is applied.

    Args:
        dataset: e.g. the result of ``fashion_mnist(root)`` or ``cifar10(root)``.

    Returns:
        ``(images, targets)``: images float32 (N, C, H, W) in [0, 1], targets int64 (N,).

    Raises:
        TypeError: when ``dataset`` has no ``.data``/``.targets`` of a supported layout.

    Example:
        >>> images, targets = image_tensors(fashion_mnist("data"))  # doctest: +SKIP
        >>> loader = InMemoryLoader(images, targets, batch_size=64)  # doctest: +SKIP
    """
    data = getattr(dataset, "data", None)
    labels = getattr(dataset, "targets", None)
    if data is None or labels is None:
        raise TypeError(
            f"image_tensors needs a dataset with .data and .targets (torchvision's FashionMNIST, "
            f"CIFAR10, MNIST), got {type(dataset).__name__}."
        )
    images = torch.as_tensor(data)
    if images.dtype != torch.uint8 or images.ndim not in (3, 4):
        raise TypeError(
            f"expected .data to be uint8 images (N, H, W) or (N, H, W, C), got dtype "
            f"{images.dtype} and shape {tuple(images.shape)}."
        )
    images = images.unsqueeze(1) if images.ndim == 3 else images.permute(0, 3, 1, 2)
    images = images.to(torch.float32).div_(255.0).contiguous()
    return images, torch.as_tensor(labels, dtype=torch.int64)


# ----------------------------------------------------------------------------- batching


def pad_collate(
    batch: Sequence[tuple[torch.Tensor, Any]], pad_value: float = 0
) -> tuple[tuple[torch.Tensor, torch.Tensor], Any]:
    """Collate variable-length ``(sequence, target)`` samples into padded tensors and a mask.

    Use it as a DataLoader's ``collate_fn``. The result is ``((padded, mask), targets)``, so a
    loop that unpacks ``inputs, targets`` keeps working and ``model(*inputs)`` calls
    ``model.forward(padded, mask)`` (as ``companion.train_one_epoch`` does). The lengths are
    ``mask.sum(dim=1)``. With ``num_workers > 0`` this runs inside the worker processes.

    Args:
        batch: samples ``(sequence, target)``; each sequence a tensor of shape (L_i, ...) with
            the same trailing dimensions and dtype; targets anything ``default_collate`` stacks.
        pad_value: value written at padded positions.

    Returns:
        ``((padded, mask), targets)``: padded (B, T, ...) with ``T = max(L_i)``; mask bool (B, T),
        True on real positions and False on padding; targets collated (int64 (B,) for labels).

    Raises:
        ValueError: for an empty batch, samples that are not pairs, or mismatched trailing shapes.
        TypeError: when a sequence is not a tensor.

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
        if not isinstance(seq, torch.Tensor) or seq.ndim == 0:
            raise TypeError(
                f"sample {i}: the sequence must be a tensor of shape (L, ...), got "
                f"{type(seq).__name__}{tuple(seq.shape) if isinstance(seq, torch.Tensor) else ''}."
            )
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
    return (padded, mask), default_collate(targets)


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
        self.batch_size = _check_int("batch_size", batch_size, minimum=1)
        self.shuffle = _check_bool("shuffle", shuffle)
        self.drop_last = _check_bool("drop_last", drop_last)
        self.seed = _check_int("seed", seed, minimum=0)
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
        if self.shuffle:
            order = torch.randperm(self.num_samples, generator=self._generator)
        else:
            order = torch.arange(self.num_samples)
        self.epoch += 1
        return self._batches(order.to(self.device))

    def _batches(self, order: torch.Tensor) -> Iterator[tuple[torch.Tensor, ...]]:
        # One small gather per batch: a single big permuted copy per epoch would double the
        # memory, and its multi-threaded gather stalls when other processes share the cores.
        for index in order[: len(self) * self.batch_size].split(self.batch_size):
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


# ----------------------------------------------------------------------------- throughput


def _count_samples(batch: Any) -> int:
    if isinstance(batch, torch.Tensor):
        return len(batch) if batch.ndim else 1
    if isinstance(batch, (tuple, list)) and batch:
        return _count_samples(batch[0])
    if isinstance(batch, dict) and batch:
        return _count_samples(next(iter(batch.values())))
    raise TypeError(
        f"cannot count the samples in a batch of type {type(batch).__name__}; the loader should "
        "yield tensors, or tuples/lists/dicts whose first item is a tensor."
    )


def _move(batch: Any, device: torch.device, non_blocking: bool) -> Any:
    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=non_blocking)
    if isinstance(batch, (tuple, list)):
        return [_move(b, device, non_blocking) for b in batch]
    if isinstance(batch, dict):
        return {k: _move(v, device, non_blocking) for k, v in batch.items()}
    return batch


def _pinning_works() -> bool:
    """Whether DataLoader's pin_memory does anything here (it needs a non-MPS accelerator)."""
    if not torch.accelerator.is_available():
        return False
    return torch.accelerator.current_accelerator().type != "mps"


class ThroughputTable:
    """The result of ``loader_throughput``: one row per (num_workers, pin_memory) setting.

    Prints as an aligned table, renders as HTML in a notebook, converts with ``to_dict()`` and
    draws itself with ``plot()``. ``rows`` is the list of row dicts with keys ``num_workers``,
    ``pin_memory``, ``samples_per_s`` (NaN where skipped), ``batches`` (measured after the
    first), ``startup_s`` (from ``make_loader`` to the first batch, worker start-up included)
    and ``note``.
    """

    columns = ("num_workers", "pin_memory", "samples_per_s", "batches", "startup_s", "note")

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows

    def to_dict(self) -> dict[str, list[Any]]:
        """Columns as lists: ``pandas.DataFrame(table.to_dict())`` works.

        Returns:
            ``{column: [value per row]}`` for each of ``ThroughputTable.columns``.

        Example:
            >>> ThroughputTable([]).to_dict()["samples_per_s"]
            []
        """
        return {c: [row[c] for row in self.rows] for c in self.columns}

    def best(self) -> dict[str, Any] | None:
        """The measured row with the most samples per second (None when nothing was measured).

        Example:
            >>> ThroughputTable([]).best() is None
            True
        """
        measured = [r for r in self.rows if not math.isnan(r["samples_per_s"])]
        return max(measured, key=lambda r: r["samples_per_s"]) if measured else None

    def _cells(self) -> list[list[str]]:
        cells = []
        for r in self.rows:
            speed = "skipped" if math.isnan(r["samples_per_s"]) else f"{r['samples_per_s']:,.0f}"
            startup = "" if math.isnan(r["startup_s"]) else f"{r['startup_s']:.3f}"
            cells.append(
                [str(r["num_workers"]), str(r["pin_memory"]), speed, str(r["batches"]), startup]
                + [r["note"]]
            )
        return cells

    def __str__(self) -> str:
        header = ["num_workers", "pin_memory", "samples/s", "batches", "startup s", "note"]
        table = [header, *self._cells()]
        widths = [max(len(row[i]) for row in table) for i in range(len(header))]
        lines = ["  ".join(cell.rjust(w) for cell, w in zip(row[:-1], widths)) for row in table]
        lines = [line + "  " + row[-1] for line, row in zip(lines, table)]
        return "\n".join(line.rstrip() for line in lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        import html

        header = "".join(
            f"<th>{h}</th>"
            for h in ["num_workers", "pin_memory", "samples/s", "batches", "startup s", "note"]
        )
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
            for row in self._cells()
        )
        return f"<table><thead><tr>{header}</tr></thead><tbody>{body}</tbody></table>"

    def plot(self, ax: Any = None) -> Any:
        """Samples per second against ``num_workers``, one line per ``pin_memory`` setting.

        Args:
            ax: a matplotlib Axes to draw on; a new figure when None.

        Returns:
            The matplotlib Axes.

        Example:
            >>> ax = table.plot()  # doctest: +SKIP
        """
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(5, 3.5), layout="constrained")
        for pin in sorted({r["pin_memory"] for r in self.rows}):
            rows = [
                r
                for r in self.rows
                if r["pin_memory"] == pin and not math.isnan(r["samples_per_s"])
            ]
            if rows:
                ax.plot(
                    [r["num_workers"] for r in rows],
                    [r["samples_per_s"] for r in rows],
                    marker="o",
                    label=f"pin_memory={pin}",
                )
        ax.set_xticks(sorted({r["num_workers"] for r in self.rows}))
        ax.set_xlabel("num_workers")
        ax.set_ylabel("samples / s")
        ax.set_title("DataLoader throughput")
        ax.set_ylim(bottom=0)
        if ax.lines:
            ax.legend()
        return ax


def loader_throughput(
    make_loader: Callable[..., Iterable],
    num_workers: Sequence[int] = (0, 1, 2, 4),
    pin_memory: Sequence[bool] = (False, True),
    batches: int = 50,
    device: torch.device | str | None = None,
) -> ThroughputTable:
    """Measure samples per second of a loader for each ``num_workers`` and ``pin_memory``.

    For each setting, ``make_loader(num_workers=w, pin_memory=p)`` builds a fresh loader. The
    time until its first batch is reported as ``startup_s`` (it includes starting the workers)
    and excluded from the throughput, which is measured over the next ``batches`` batches (fewer
    if the epoch ends first). With ``device``, every batch is also copied there
    (``non_blocking=pin_memory``), which is the copy that pinning speeds up. Without a CUDA-style
    accelerator, ``pin_memory=True`` rows are skipped with a note: pinning only helps
    host-to-GPU copies and PyTorch ignores it there.

    Args:
        make_loader: callable taking ``num_workers`` and ``pin_memory`` keywords, returning an
            iterable of batches (tensors, or tuples/lists/dicts of tensors).
        num_workers: worker counts to try, each an int >= 0.
        pin_memory: pin settings to try, each a bool.
        batches: batches to time per setting, after the first.
        device: optional device to copy each batch to, inside the timing.

    Returns:
        A ``ThroughputTable`` (print it, ``.plot()`` it, ``.to_dict()`` it, ``.best()``).

    Raises:
        TypeError, ValueError: for bad arguments, or a loader that yields no batch.

    Example:
        >>> ds = TensorDataset(torch.randn(512, 8), torch.randint(0, 2, (512,)))
        >>> def make_loader(num_workers, pin_memory):
        ...     return torch.utils.data.DataLoader(
        ...         ds, batch_size=32, num_workers=num_workers, pin_memory=pin_memory)
        >>> table = loader_throughput(make_loader, num_workers=(0,), pin_memory=(False,), batches=5)
        >>> table.rows[0]["batches"]
        5
    """
    if not callable(make_loader):
        raise TypeError(
            f"make_loader must be a callable like make_loader(num_workers=..., pin_memory=...) "
            f"returning a loader, got {type(make_loader).__name__}."
        )
    for w in num_workers:
        _check_int("num_workers entries", w, minimum=0)
    for p in pin_memory:
        _check_bool("pin_memory entries", p)
    batches = _check_int("batches", batches, minimum=1)
    target = torch.device(device) if device is not None else None
    rows = []
    for w in num_workers:
        for pin in pin_memory:
            row = {"num_workers": int(w), "pin_memory": pin, "note": ""}
            if pin and not _pinning_works():
                row.update(
                    samples_per_s=float("nan"),
                    batches=0,
                    startup_s=float("nan"),
                    note="skipped: no CUDA; pinning only speeds host-to-GPU copies",
                )
                rows.append(row)
                continue
            row.update(_time_loader(make_loader, int(w), pin, batches, target))
            rows.append(row)
    return ThroughputTable(rows)


def _time_loader(
    make_loader: Callable[..., Iterable],
    num_workers: int,
    pin: bool,
    batches: int,
    device: torch.device | None,
) -> dict[str, Any]:
    def sync() -> None:
        if device is not None and device.type != "cpu":
            torch.accelerator.synchronize(device)

    start = time.perf_counter()
    iterator = iter(make_loader(num_workers=num_workers, pin_memory=pin))
    try:
        first = next(iterator)
    except StopIteration:
        raise ValueError(
            f"the loader from make_loader(num_workers={num_workers}, pin_memory={pin}) yielded no "
            "batch; give it some data."
        ) from None
    _count_samples(first)
    if device is not None:
        _move(first, device, pin)
    sync()
    measured_from = time.perf_counter()
    samples = count = 0
    for batch in iterator:
        if device is not None:
            batch = _move(batch, device, pin)
        samples += _count_samples(batch)
        count += 1
        if count == batches:
            break
    sync()
    elapsed = time.perf_counter() - measured_from
    del iterator  # shuts the workers down now rather than at garbage collection
    note = "" if count else "only one batch: nothing measured after it"
    if 0 < count < batches:
        note = f"epoch ended after {count + 1} batches"
    return {
        "samples_per_s": samples / elapsed if count else float("nan"),
        "batches": count,
        "startup_s": measured_from - start,
        "note": note,
    }
