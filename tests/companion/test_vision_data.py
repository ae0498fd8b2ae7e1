"""Tests for companion/vision_data.py: the torchvision wrappers, on fixture files."""

import gzip
import hashlib
import pickle
from pathlib import Path

import numpy as np
import pytest
import torch
from torch.utils.data import TensorDataset

from companion.vision_data import cifar10, fashion_mnist, image_tensors

# ----------------------------------------------------------------------------- fixture writers


def _write_idx(path: Path, array: np.ndarray, *, gz: bool = False) -> None:
    """Write ``array`` (uint8) in the big-endian idx-ubyte format MNIST files use."""
    header = bytes([0, 0, 0x08, array.ndim]) + b"".join(
        int(d).to_bytes(4, "big") for d in array.shape
    )
    payload = header + array.astype(np.uint8).tobytes()
    path.parent.mkdir(parents=True, exist_ok=True)
    if gz:
        with gzip.open(f"{path}.gz", "wb") as f:
            f.write(payload)
    else:
        path.write_bytes(payload)


def _write_fashion_mnist(root: Path, *, gz: bool = False) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    raw = root / "FashionMNIST" / "raw"
    arrays = {}
    for split, n in (("train", 12), ("t10k", 5)):
        images = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
        labels = rng.integers(0, 10, size=n, dtype=np.uint8)
        _write_idx(raw / f"{split}-images-idx3-ubyte", images, gz=gz)
        _write_idx(raw / f"{split}-labels-idx1-ubyte", labels, gz=gz)
        arrays[split] = (images, labels)
    return arrays


CIFAR_NAMES = "airplane automobile bird cat deer dog frog horse ship truck".split()


def _write_cifar10(root: Path, per_batch: int = 3) -> dict[str, dict]:
    """Pickled batches as in cifar-10-python.tar.gz: {"data": uint8 (n, 3072), "labels": [...]}."""
    rng = np.random.default_rng(1)
    folder = root / "cifar-10-batches-py"
    folder.mkdir(parents=True)
    batches = {}
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        entry = {
            "batch_label": name,
            "labels": rng.integers(0, 10, size=per_batch).tolist(),
            "data": rng.integers(0, 256, size=(per_batch, 3072), dtype=np.uint8),
            "filenames": [f"img{i}.png" for i in range(per_batch)],
        }
        (folder / name).write_bytes(pickle.dumps(entry))
        batches[name] = entry
    meta = {"label_names": CIFAR_NAMES, "num_cases_per_batch": per_batch, "num_vis": 3072}
    (folder / "batches.meta").write_bytes(pickle.dumps(meta))
    return batches


def _md5(path: Path) -> str:
    return hashlib.md5(path.read_bytes()).hexdigest()


@pytest.fixture
def cifar_checksums_of_fixture(monkeypatch, tmp_path):
    """Point torchvision's expected MD5s at the fixture files, so its own check runs on them."""
    from torchvision.datasets import CIFAR10

    batches = _write_cifar10(tmp_path)
    folder = tmp_path / "cifar-10-batches-py"
    monkeypatch.setattr(
        CIFAR10,
        "train_list",
        [[f"data_batch_{i}", _md5(folder / f"data_batch_{i}")] for i in range(1, 6)],
    )
    monkeypatch.setattr(CIFAR10, "test_list", [["test_batch", _md5(folder / "test_batch")]])
    monkeypatch.setattr(CIFAR10, "meta", {**CIFAR10.meta, "md5": _md5(folder / "batches.meta")})
    return tmp_path, batches


# ----------------------------------------------------------------------------- torchvision


@pytest.mark.requires_torchvision
def test_fashion_mnist_loads_idx_files_with_the_real_torchvision_class(tmp_path):
    from torchvision.datasets import FashionMNIST

    arrays = _write_fashion_mnist(tmp_path)
    train = fashion_mnist(tmp_path)
    test = fashion_mnist(tmp_path, train=False, transform=lambda img: np.asarray(img).sum())
    assert isinstance(train, FashionMNIST) and len(train) == 12 and len(test) == 5
    assert train.classes[0] == "T-shirt/top"
    assert np.array_equal(train.data.numpy(), arrays["train"][0])
    image, label = train[3]
    assert image.size == (28, 28) and label == int(arrays["train"][1][3])  # a PIL image
    assert test[0][0] == arrays["t10k"][0][0].astype(np.int64).sum()  # the transform ran
    images, targets = image_tensors(train)
    assert images.shape == (12, 1, 28, 28) and images.dtype == torch.float32
    torch.testing.assert_close(images[3, 0] * 255, torch.from_numpy(arrays["train"][0][3]).float())
    assert targets.tolist() == arrays["train"][1].tolist()


@pytest.mark.requires_torchvision
def test_fashion_mnist_decompresses_gz_archives(tmp_path):
    arrays = _write_fashion_mnist(tmp_path, gz=True)
    ds = fashion_mnist(tmp_path, train=False)
    assert (tmp_path / "FashionMNIST" / "raw" / "t10k-images-idx3-ubyte").is_file()
    assert np.array_equal(ds.targets.numpy(), arrays["t10k"][1])


@pytest.mark.requires_torchvision
def test_fashion_mnist_missing_files_say_where_and_how(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        fashion_mnist(tmp_path / "nowhere")
    message = str(info.value)
    assert str(tmp_path / "nowhere" / "FashionMNIST" / "raw") in message
    assert "train-images-idx3-ubyte" in message and "download=True" in message


@pytest.mark.requires_torchvision
def test_cifar10_loads_pickled_batches_with_the_real_torchvision_class(cifar_checksums_of_fixture):
    from torchvision.datasets import CIFAR10

    root, batches = cifar_checksums_of_fixture
    train, test = cifar10(root), cifar10(root, train=False)
    assert isinstance(train, CIFAR10) and len(train) == 15 and len(test) == 3
    assert train.classes == CIFAR_NAMES
    first = batches["data_batch_1"]
    expected = first["data"][0].reshape(3, 32, 32).transpose(1, 2, 0)
    image, label = train[0]
    assert np.array_equal(np.asarray(image), expected) and label == first["labels"][0]
    images, targets = image_tensors(test)
    assert images.shape == (3, 3, 32, 32) and targets.tolist() == batches["test_batch"]["labels"]
    torch.testing.assert_close(
        images[1] * 255,
        torch.from_numpy(batches["test_batch"]["data"][1].reshape(3, 32, 32)).float(),
    )


@pytest.mark.requires_torchvision
def test_cifar10_reports_files_that_fail_the_official_checksums(tmp_path):
    _write_cifar10(tmp_path)  # our fixture bytes are not the official files
    with pytest.raises(ValueError, match="MD5") as info:
        cifar10(tmp_path)
    assert "data_batch_1" in str(info.value) and "download" in str(info.value)


@pytest.mark.requires_torchvision
def test_cifar10_missing_files_say_where_and_how(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        cifar10(tmp_path)
    message = str(info.value)
    assert str(tmp_path / "cifar-10-batches-py") in message and "batches.meta" in message
    assert "cifar-10-python.tar.gz" in message and "download=True" in message


def test_image_tensors_rejects_other_datasets():
    with pytest.raises(TypeError, match=".data and .targets"):
        image_tensors(TensorDataset(torch.zeros(2)))
