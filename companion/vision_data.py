"""The real torchvision image datasets, FashionMNIST and CIFAR-10, as tensors when wanted.

``fashion_mnist`` and ``cifar10`` are the real torchvision loaders, used when their files are on
disk (or the learner is online); ``image_tensors`` turns such a dataset into two tensors in
memory, ready for :class:`companion.loaders.InMemoryLoader`. Offline, the datasets of
:mod:`companion.data` need no files.

Example:
    >>> ds = fashion_mnist("data")  # doctest: +SKIP
    >>> images, targets = image_tensors(ds)  # doctest: +SKIP
"""

from __future__ import annotations

import gzip
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch.utils.data import Dataset

from companion._checks import check_bool
from companion._extras import need

__all__ = ["cifar10", "fashion_mnist", "image_tensors"]


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
    FashionMNIST = need("torchvision.datasets", "vision", "companion.fashion_mnist").FashionMNIST

    check_bool("train", train)
    check_bool("download", download)
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
    CIFAR10 = need("torchvision.datasets", "vision", "companion.cifar10").CIFAR10
    check_integrity = need(
        "torchvision.datasets.utils", "vision", "companion.cifar10"
    ).check_integrity

    check_bool("train", train)
    check_bool("download", download)
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
