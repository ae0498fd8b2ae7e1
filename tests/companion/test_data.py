"""Tests for companion/data.py: offline datasets, torchvision wrappers, padding, loaders."""

import gzip
import hashlib
import pickle
from functools import partial
from pathlib import Path

import matplotlib
import numpy as np
import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import companion
from companion.checkpoint import list_checkpoints
from companion.data import (
    SHAPES_CLASSES,
    InMemoryLoader,
    SequenceDataset,
    Splits,
    ThroughputTable,
    cifar10,
    digits,
    fashion_mnist,
    image_tensors,
    loader_throughput,
    pad_collate,
    sequences,
    shapes,
)

matplotlib.use("Agg")


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    """Tiny models train fastest on one thread, and two test workers share two cores."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


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


# ----------------------------------------------------------------------------- digits


def test_digits_shapes_dtypes_and_disjoint_stratified_split():
    train_ds, val_ds = digits(seed=0)
    x_train, y_train = train_ds.tensors
    x_val, y_val = val_ds.tensors
    assert len(train_ds) + len(val_ds) == 1797
    assert x_train.shape[1:] == (1, 8, 8) and x_train.dtype == torch.float32
    assert y_train.dtype == torch.int64 and set(y_train.tolist()) == set(range(10))
    assert 0.0 <= float(x_train.min()) and float(x_train.max()) <= 1.0
    assert abs(len(val_ds) / 1797 - 0.2) < 0.01
    # train + val is a partition of the bundled images: same rows, same multiplicities.
    from sklearn.datasets import load_digits

    reference = torch.from_numpy(load_digits().images.astype(np.float32) / 16).flatten(1)
    ours = torch.cat([x_train, x_val]).flatten(1)
    rows, counts = torch.unique(ours, dim=0, return_counts=True)
    expected_rows, expected_counts = torch.unique(reference, dim=0, return_counts=True)
    assert torch.equal(rows, expected_rows) and torch.equal(counts, expected_counts)
    counts = torch.bincount(y_val, minlength=10)
    assert counts.min() >= 33 and counts.max() <= 38  # about a fifth of each ~180-sample class


def test_digits_split_is_deterministic_by_seed():
    a, b, c = digits(seed=0), digits(seed=0), digits(seed=1)
    assert torch.equal(a.val.tensors[0], b.val.tensors[0])
    assert not torch.equal(a.val.tensors[0], c.val.tensors[0])
    assert isinstance(a, Splits) and a.train is a[0]


def test_digits_upscale_and_no_validation():
    train_ds, val_ds = digits(upscale=4, val_fraction=0.0)
    assert train_ds.tensors[0].shape == (1797, 1, 32, 32) and len(val_ds) == 0
    assert 0.0 <= float(train_ds.tensors[0].min()) and float(train_ds.tensors[0].max()) <= 1.0


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        ({"upscale": 0}, ValueError, "upscale"),
        ({"upscale": 2.5}, TypeError, "upscale"),
        ({"val_fraction": 1.0}, ValueError, "val_fraction"),
        ({"seed": -1}, ValueError, "seed"),
    ],
)
def test_digits_bad_arguments(kwargs, error, words):
    with pytest.raises(error, match=words):
        digits(**kwargs)


# ----------------------------------------------------------------------------- shapes


def test_shapes_deterministic_balanced_and_in_range():
    train_ds, val_ds = shapes(90, size=20, seed=3)
    again = shapes(90, size=20, seed=3)
    other = shapes(90, size=20, seed=4)
    images, labels = train_ds.tensors
    assert images.shape == (72, 1, 20, 20) and images.dtype == torch.float32
    assert labels.dtype == torch.int64 and len(val_ds) == 18
    assert torch.equal(images, again.train.tensors[0])
    assert torch.equal(labels, again.train.tensors[1])
    assert not torch.equal(images, other.train.tensors[0])
    all_labels = torch.cat([labels, val_ds.tensors[1]])
    assert torch.bincount(all_labels).tolist() == [30, 30, 30]
    assert float(images.min()) >= 0.0 and float(images.max()) <= 1.0
    assert SHAPES_CLASSES == ("circle", "square", "triangle")


def test_shapes_draw_the_named_shapes():
    # Without noise, a square fills 2 r^2 of its circumcircle's pi r^2, a triangle 1.3 r^2:
    # the filled share of the bounding circle tells the classes apart.
    images, labels = shapes(60, size=48, seed=0, noise=0.0, val_fraction=0.0).train.tensors
    filled = (images > 0.5).flatten(1).float()
    # Estimate each shape's circumcircle from its filled pixels, then the share it fills.
    yy, xx = torch.meshgrid(torch.arange(48.0), torch.arange(48.0), indexing="ij")
    ratios = []
    for img in filled.view(-1, 48, 48):
        ys, xs = yy[img > 0], xx[img > 0]
        cy, cx = ys.mean(), xs.mean()
        radius = torch.sqrt((ys - cy) ** 2 + (xs - cx) ** 2).max() + 0.5
        ratios.append(img.sum() / (torch.pi * radius**2))
    ratios = torch.stack(ratios)
    mean = [float(ratios[labels == k].mean()) for k in range(3)]
    assert mean[0] > 0.85  # circle fills its circle
    assert 0.5 < mean[1] < 0.75  # square: 2 / pi = 0.64
    assert 0.3 < mean[2] < 0.5  # triangle: 1.3 / pi = 0.41


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"n": 0}, ValueError),
        ({"n": 10, "size": 4}, ValueError),
        ({"n": 10, "noise": -1}, ValueError),
        ({"n": "10"}, TypeError),
        ({"n": 10, "noise": "high"}, TypeError),
    ],
)
def test_shapes_bad_arguments(kwargs, error):
    with pytest.raises(error):
        shapes(**kwargs)


# ----------------------------------------------------------------------------- sequences


def test_sequences_lengths_vocab_labels_and_determinism():
    train_ds, val_ds = sequences(200, seed=0, min_len=3, max_len=9)
    assert isinstance(train_ds, SequenceDataset) and len(train_ds) + len(val_ds) == 200
    assert train_ds.vocab_size == 13 and train_ds.num_classes == 3
    lengths = {len(train_ds[i][0]) for i in range(len(train_ds))}
    assert min(lengths) >= 3 and max(lengths) <= 9 and len(lengths) > 3
    for tokens, target in (train_ds[i] for i in range(len(train_ds))):
        assert tokens.dtype == torch.int64 and target.dtype == torch.int64
        assert int(tokens.min()) >= 1 and int(tokens.max()) < 13  # 0 stays free for padding
        counts = torch.bincount((tokens - 1) // 4, minlength=3)
        assert int(counts.argmax()) == int(target) and (counts == counts.max()).sum() == 1
    again = sequences(200, seed=0, min_len=3, max_len=9).train
    assert all(torch.equal(a, b) for a, b in zip(train_ds.sequences, again.sequences))
    assert torch.equal(train_ds.targets, again.targets)
    assert not torch.equal(sequences(200, seed=1).train.targets[:50], train_ds.targets[:50])


def test_sequences_bad_lengths():
    with pytest.raises(ValueError, match="max_len"):
        sequences(10, min_len=5, max_len=4)
    with pytest.raises(ValueError, match="num_classes"):
        sequences(10, num_classes=1)


# ----------------------------------------------------------------------------- pad_collate


def test_pad_collate_pads_masks_and_collates_targets():
    batch = [(torch.tensor([1, 2, 3]), 0), (torch.tensor([4]), 2), (torch.tensor([5, 6]), 1)]
    (padded, mask), targets = pad_collate(batch, pad_value=-1)
    assert padded.tolist() == [[1, 2, 3], [4, -1, -1], [5, 6, -1]]
    assert mask.dtype == torch.bool
    assert mask.tolist() == [[True, True, True], [True, False, False], [True, True, False]]
    assert mask.sum(dim=1).tolist() == [3, 1, 2]
    assert targets.tolist() == [0, 2, 1] and targets.dtype == torch.int64


def test_pad_collate_keeps_feature_dimensions():
    batch = [(torch.ones(4, 3), torch.tensor(1)), (torch.ones(2, 3), torch.tensor(0))]
    (padded, mask), targets = pad_collate(batch)
    assert padded.shape == (2, 4, 3) and mask.shape == (2, 4)
    assert float(padded[1, 2:].abs().sum()) == 0.0 and bool(mask[1, :2].all())


def test_pad_collate_with_a_dataloader_over_sequences():
    train_ds, _ = sequences(64, seed=0)
    loader = DataLoader(
        train_ds, batch_size=8, shuffle=True, collate_fn=partial(pad_collate, pad_value=0)
    )
    seen = 0
    for (padded, mask), targets in loader:
        assert padded.shape == mask.shape and padded.shape[0] == len(targets)
        assert torch.equal(padded == 0, ~mask)  # tokens are never 0: padding is exactly ~mask
        seen += len(targets)
    assert seen == len(train_ds)


@pytest.mark.parametrize(
    "batch, error",
    [
        ([], ValueError),
        ([torch.tensor([1, 2])], ValueError),
        ([([1, 2], 0)], TypeError),
        ([(torch.ones(2, 3), 0), (torch.ones(2, 4), 1)], ValueError),
    ],
)
def test_pad_collate_bad_batches(batch, error):
    with pytest.raises(error):
        pad_collate(batch)


# ----------------------------------------------------------------------------- InMemoryLoader


def _ids_loader(n=103, **kwargs):
    ids = torch.arange(n)
    return InMemoryLoader(ids, ids * 10, **{"batch_size": 10, **kwargs})


def _epoch_ids(loader):
    return torch.cat([ids for ids, _ in loader])


def test_in_memory_loader_covers_every_sample_each_epoch_with_fresh_orders():
    loader = _ids_loader()
    assert len(loader) == 11
    first, second = _epoch_ids(loader), _epoch_ids(loader)
    assert sorted(first.tolist()) == list(range(103)) == sorted(second.tolist())
    assert not torch.equal(first, second) and not torch.equal(first, torch.arange(103))
    for ids, tens in loader:  # tensors stay aligned row by row
        assert torch.equal(tens, ids * 10)
    assert loader.epoch == 3


def test_in_memory_loader_is_reproducible_by_seed_and_leaves_global_rng_alone():
    torch.manual_seed(0)
    before = torch.get_rng_state()
    first = _epoch_ids(_ids_loader(seed=5))
    assert torch.equal(first, _epoch_ids(_ids_loader(seed=5)))
    assert not torch.equal(first, _epoch_ids(_ids_loader(seed=6)))
    assert torch.equal(before, torch.get_rng_state())


def test_in_memory_loader_no_shuffle_and_drop_last():
    loader = _ids_loader(shuffle=False, drop_last=True)
    batches = [ids for ids, _ in loader]
    assert len(loader) == len(batches) == 10 and all(len(b) == 10 for b in batches)
    assert torch.equal(torch.cat(batches), torch.arange(100))
    kept = _ids_loader(shuffle=False)
    assert [len(ids) for ids, _ in kept][-1] == 3
    one = InMemoryLoader(torch.arange(5), batch_size=2)
    assert all(isinstance(batch, tuple) and len(batch) == 1 for batch in one)


def test_in_memory_loader_batches_are_copies():
    data = torch.zeros(8, 2)
    for (inputs,) in InMemoryLoader(data, batch_size=4, shuffle=False):
        inputs += 1
    assert float(data.abs().sum()) == 0.0


def test_in_memory_loader_device_argument_moves_once():
    loader = InMemoryLoader(torch.randn(20, 3), torch.arange(20), batch_size=8, device="cpu")
    assert loader.device == torch.device("cpu")
    assert all(t.device.type == "cpu" for batch in loader for t in batch)
    with pytest.raises(ValueError, match="different devices"):
        InMemoryLoader(torch.zeros(4), torch.zeros(4, device="meta"), batch_size=2)


@pytest.mark.requires_cuda
def test_in_memory_loader_on_cuda():
    loader = InMemoryLoader(torch.randn(20, 3), torch.arange(20), batch_size=8, device="cuda")
    assert all(t.is_cuda for batch in loader for t in batch)
    assert sorted(torch.cat([y for _, y in loader]).tolist()) == list(range(20))


def test_in_memory_loader_state_dict_round_trip_through_torch_save(tmp_path):
    loader = _ids_loader(seed=1)
    _epoch_ids(loader)  # an epoch already done
    state = loader.state_dict()
    torch.save(state, tmp_path / "loader.pt")
    expected = [_epoch_ids(loader), _epoch_ids(loader)]
    restored = _ids_loader(seed=99)  # a different seed: the state must override it
    restored.load_state_dict(torch.load(tmp_path / "loader.pt", weights_only=True))
    assert torch.equal(_epoch_ids(restored), expected[0])
    assert torch.equal(_epoch_ids(restored), expected[1])
    assert restored.epoch == loader.epoch


def test_in_memory_loader_state_taken_before_iter_replays_a_partial_epoch():
    # The training loop's protocol: save the state just before iter(), later restore it and
    # skip the batches already done by iterating.
    loader = _ids_loader(seed=2)
    state = loader.state_dict()
    full = [ids for ids, _ in loader]
    resumed = _ids_loader(seed=2)
    _epoch_ids(resumed)
    resumed.load_state_dict(state)
    batches = iter(resumed)
    for _ in range(4):
        next(batches)
    assert all(torch.equal(a, b) for a, (b, _) in zip(full[4:], batches, strict=True))


def test_in_memory_loader_rejects_a_state_from_other_batching():
    state = _ids_loader(batch_size=10).state_dict()
    with pytest.raises(ValueError, match="batch_size"):
        _ids_loader(batch_size=20).load_state_dict(state)
    with pytest.raises(ValueError, match="num_samples"):
        _ids_loader(n=50).load_state_dict(state)
    with pytest.raises(TypeError, match="state_dict"):
        _ids_loader().load_state_dict({"epoch": 1})


@pytest.mark.parametrize(
    "args, kwargs, error, words",
    [
        ((), {"batch_size": 2}, ValueError, "at least one tensor"),
        (([1, 2, 3],), {"batch_size": 2}, TypeError, "torch.Tensor"),
        ((torch.zeros(3), torch.zeros(4)), {"batch_size": 2}, ValueError, r"\[3, 4\]"),
        ((torch.zeros(3),), {"batch_size": 0}, ValueError, "batch_size"),
        ((torch.zeros(3),), {"batch_size": 2.0}, TypeError, "batch_size"),
        ((torch.zeros(3),), {"batch_size": 2, "shuffle": 1}, TypeError, "shuffle"),
        ((torch.zeros(0),), {"batch_size": 2}, ValueError, "no samples"),
        ((torch.zeros(3),), {"batch_size": 4, "drop_last": True}, ValueError, "drop_last"),
    ],
)
def test_in_memory_loader_bad_arguments(args, kwargs, error, words):
    with pytest.raises(error, match=words):
        InMemoryLoader(*args, **kwargs)


def test_in_memory_loader_mid_epoch_exact_resume_with_fit(tmp_path):
    def run(checkpoint_dir, resume=False, num_epochs=3):
        companion.seed_everything(0)
        inputs, targets = torch.randn(96, 6), torch.randint(0, 3, (96,))
        loader = InMemoryLoader(inputs, targets, batch_size=16, seed=resume * 7)
        model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        companion.fit(model, loader, optimizer, nn.CrossEntropyLoss(), num_epochs=num_epochs,
                      device="cpu", checkpoint_dir=checkpoint_dir, checkpoint_every=4,
                      keep_last=100, resume=resume, progress=False)  # fmt: skip
        return model

    full = run(tmp_path / "full")
    # Delete the checkpoints after step 8 (batch 2 of epoch 2 with 6 batches an epoch): the
    # newest left is mid-epoch, so resuming replays that epoch's order from the loader state.
    for path in list_checkpoints(tmp_path / "full"):
        if int(path.stem.split("-s")[1]) > 8:
            path.unlink()
    resumed = run(tmp_path / "full", resume=True)
    for a, b in zip(full.parameters(), resumed.parameters()):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


# ----------------------------------------------------------------------------- torchvision


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


def test_fashion_mnist_decompresses_gz_archives(tmp_path):
    arrays = _write_fashion_mnist(tmp_path, gz=True)
    ds = fashion_mnist(tmp_path, train=False)
    assert (tmp_path / "FashionMNIST" / "raw" / "t10k-images-idx3-ubyte").is_file()
    assert np.array_equal(ds.targets.numpy(), arrays["t10k"][1])


def test_fashion_mnist_missing_files_say_where_and_how(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        fashion_mnist(tmp_path / "nowhere")
    message = str(info.value)
    assert str(tmp_path / "nowhere" / "FashionMNIST" / "raw") in message
    assert "train-images-idx3-ubyte" in message and "download=True" in message


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


def test_cifar10_reports_files_that_fail_the_official_checksums(tmp_path):
    _write_cifar10(tmp_path)  # our fixture bytes are not the official files
    with pytest.raises(ValueError, match="MD5") as info:
        cifar10(tmp_path)
    assert "data_batch_1" in str(info.value) and "download" in str(info.value)


def test_cifar10_missing_files_say_where_and_how(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        cifar10(tmp_path)
    message = str(info.value)
    assert str(tmp_path / "cifar-10-batches-py") in message and "batches.meta" in message
    assert "cifar-10-python.tar.gz" in message and "download=True" in message


def test_image_tensors_rejects_other_datasets():
    with pytest.raises(TypeError, match=".data and .targets"):
        image_tensors(TensorDataset(torch.zeros(2)))


# ----------------------------------------------------------------------------- throughput


def _make_loader(num_workers, pin_memory):
    dataset = TensorDataset(torch.randn(256, 4), torch.arange(256))
    return DataLoader(dataset, batch_size=16, num_workers=num_workers, pin_memory=pin_memory)


def test_loader_throughput_table_prints_converts_and_plots():
    table = loader_throughput(_make_loader, num_workers=(0,), pin_memory=(False, True), batches=5)
    assert isinstance(table, ThroughputTable) and len(table.rows) == 2
    measured, pinned = table.rows
    assert measured["num_workers"] == 0 and measured["batches"] == 5
    assert measured["samples_per_s"] > 0 and measured["startup_s"] >= 0
    if not torch.accelerator.is_available():
        assert np.isnan(pinned["samples_per_s"]) and "skipped" in pinned["note"]
    columns = table.to_dict()
    assert set(columns) == set(ThroughputTable.columns)
    assert all(len(v) == 2 for v in columns.values())
    assert table.best() is measured or table.best()["samples_per_s"] >= measured["samples_per_s"]
    text = str(table)
    assert "num_workers" in text and "samples/s" in text and len(text.splitlines()) == 3
    assert "<table>" in table._repr_html_()
    ax = table.plot()
    assert ax.get_xlabel() == "num_workers" and len(ax.lines) >= 1
    import matplotlib.pyplot as plt

    plt.close("all")


def test_loader_throughput_with_one_worker_and_a_short_epoch():
    table = loader_throughput(_make_loader, num_workers=(1,), pin_memory=(False,), batches=100)
    (row,) = table.rows
    assert row["num_workers"] == 1 and row["batches"] == 15  # 16 batches, the first excluded
    assert "epoch ended" in row["note"] and row["samples_per_s"] > 0


def test_loader_throughput_bad_arguments():
    with pytest.raises(TypeError, match="make_loader"):
        loader_throughput(None)
    with pytest.raises(ValueError, match="num_workers"):
        loader_throughput(_make_loader, num_workers=(-1,))
    with pytest.raises(ValueError, match="no batch"):
        loader_throughput(lambda **kw: [], num_workers=(0,), pin_memory=(False,))


# ----------------------------------------------------------------------------- learnability


def test_a_small_mlp_learns_digits():
    companion.seed_everything(0)
    train_ds, val_ds = digits(seed=0)
    train_loader = InMemoryLoader(*train_ds.tensors, batch_size=32, seed=0)
    val_loader = InMemoryLoader(*val_ds.tensors, batch_size=256, shuffle=False)
    model = nn.Sequential(nn.Flatten(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(5):
        companion.train_one_epoch(
            model, train_loader, optimizer, nn.CrossEntropyLoss(), device="cpu"
        )
    scores = companion.evaluate(model, val_loader, nn.CrossEntropyLoss(), device="cpu")
    assert scores["accuracy"] > 0.9  # chance is 0.1


def test_a_small_cnn_learns_shapes():
    companion.seed_everything(0)
    train_ds, val_ds = shapes(1200, size=16, seed=0)
    train_loader = InMemoryLoader(*train_ds.tensors, batch_size=16, seed=0)
    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),  # (B, 16, 8, 8)
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),  # (B, 32, 4, 4)
        nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveMaxPool2d(1),  # (B, 32, 1, 1)
        nn.Flatten(), nn.Linear(32, 3),
    )  # fmt: skip
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
    for _ in range(6):
        companion.train_one_epoch(
            model, train_loader, optimizer, nn.CrossEntropyLoss(), device="cpu"
        )
    val_loader = InMemoryLoader(*val_ds.tensors, batch_size=256, shuffle=False)
    scores = companion.evaluate(model, val_loader, nn.CrossEntropyLoss(), device="cpu")
    assert scores["accuracy"] > 0.7  # chance is 1/3


class _MeanPooled(nn.Module):
    def __init__(self, vocab_size, num_classes):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, 16, padding_idx=0)
        self.head = nn.Linear(16, num_classes)

    def forward(self, tokens, mask):  # (B, T), (B, T)
        summed = (self.embed(tokens) * mask.unsqueeze(-1)).sum(dim=1)  # (B, 16)
        return self.head(summed / mask.sum(dim=1, keepdim=True))


def test_a_mean_pooled_embedding_learns_sequences_through_pad_collate():
    companion.seed_everything(0)
    train_ds, val_ds = sequences(600, seed=0)
    train_loader = DataLoader(train_ds, batch_size=32, shuffle=True, collate_fn=pad_collate)
    val_loader = DataLoader(val_ds, batch_size=128, collate_fn=pad_collate)
    model = _MeanPooled(train_ds.vocab_size, train_ds.num_classes)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-2)
    for _ in range(6):  # train_one_epoch calls model(*inputs), i.e. model(tokens, mask)
        companion.train_one_epoch(
            model, train_loader, optimizer, nn.CrossEntropyLoss(), device="cpu"
        )
    scores = companion.evaluate(model, val_loader, nn.CrossEntropyLoss(), device="cpu")
    assert scores["accuracy"] > 0.8  # chance is 1/3
