"""Tests for companion/data.py: the offline datasets, and that small models learn them."""

import numpy as np
import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader

import companion
from companion.data import SHAPES_CLASSES, SequenceDataset, Splits, digits, sequences, shapes
from companion.loaders import InMemoryLoader, pad_collate

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


def test_the_shipped_digits_are_scikit_learns_copy_exactly():
    """companion ships the digits (no scikit-learn needed): the same images and labels, in order."""
    from sklearn.datasets import load_digits

    from companion.data import _DIGITS

    bunch = load_digits()
    with np.load(_DIGITS) as stored:
        assert np.array_equal(stored["images"], bunch.images)
        assert np.array_equal(stored["targets"], bunch.target)


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
