"""Tests for companion/loaders.py: pad_collate and InMemoryLoader."""

from functools import partial

import numpy as np
import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader

import companion
from companion.checkpoint import list_checkpoints
from companion.data import sequences
from companion.loaders import InMemoryLoader, pad_collate

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


def test_pad_collate_takes_numpy_views_as_pipelines_give_them():
    stream = np.array([3, 1, 4, 1, 5, 9, 2, 6, 0, 7], dtype=np.uint16)
    stream.flags.writeable = False  # like a slice of a read-only memory map
    batch = [(stream[0:3], np.uint8(2)), (stream[8:3:-1], np.uint8(0)), (stream[0:8:4], 1)]
    (padded, mask), targets = pad_collate(batch)
    assert padded.dtype == torch.int64 and targets.dtype == torch.int64
    assert padded.tolist() == [[3, 1, 4, 0, 0], [0, 6, 2, 9, 5], [3, 5, 0, 0, 0]]
    assert mask.sum(dim=1).tolist() == [3, 5, 2] and targets.tolist() == [2, 0, 1]
    features = np.arange(12, dtype=np.float32).reshape(4, 3)
    (padded, mask), targets = pad_collate(
        [(features[::-1], torch.tensor(1, dtype=torch.uint8)), (features[:1], np.int32(0))]
    )
    assert padded.dtype == torch.float32 and padded[0].tolist() == features[::-1].tolist()
    assert targets.dtype == torch.int64 and targets.tolist() == [1, 0]
    padded[0, 0, 0] = -1.0  # the batch owns its memory
    assert features[3, 0] == 9.0


def test_pad_collate_makes_integer_tensors_int64_and_keeps_other_targets():
    (padded, _), targets = pad_collate([(torch.tensor([1, 2], dtype=torch.int32), 0.5)])
    assert padded.dtype == torch.int64
    assert targets.dtype == torch.float64  # not a class id: default_collate's result


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


def test_in_memory_loader_given_a_dataset_shows_how_to_pass_its_tensors():
    # the user's mistake: InMemoryLoader(train_ds) instead of InMemoryLoader(*train_ds.tensors)
    train_ds = torch.utils.data.TensorDataset(torch.randn(8, 2), torch.arange(8))
    with pytest.raises(TypeError, match=r"InMemoryLoader\(\*dataset.tensors, batch_size=4\)"):
        InMemoryLoader(train_ds, batch_size=4)
    sequences = companion.sequences(16, seed=0).train
    with pytest.raises(TypeError, match="is a SequenceDataset \\(a Dataset\\)"):
        InMemoryLoader(sequences, batch_size=4)
