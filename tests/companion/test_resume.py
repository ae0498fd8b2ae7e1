"""Mid-epoch resume skips the consumed batches by sample index and stays bit-for-bit exact.

Each run trains in this process: an uninterrupted run, a run that dies mid-epoch (the loss
function raises, as a preempted job would stop), and a run resumed from its newest checkpoint.
The dataset writes every index it loads to a file, from the main process or a worker, so the
tests see exactly which samples a resumed run fetched.
"""

import random
import warnings

import numpy as np
import pytest
import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import (
    BatchSampler,
    DataLoader,
    Dataset,
    DistributedSampler,
    IterableDataset,
    RandomSampler,
    Sampler,
)

import companion
from companion.loaders import InMemoryLoader
from companion.resume import EpochFeed, ReplayWarning, resume_mode

SAMPLES, BATCH = 52, 8


class Recorded(Dataset):
    """Samples ``((x, index), target)``; each load appends its index to ``log``.

    With ``augment``, ``x`` gets noise from torch, Python's ``random`` and NumPy: inside a
    worker these are the worker's generators, in the main process the global ones.
    """

    def __init__(self, log, augment=True):
        generator = torch.Generator().manual_seed(0)
        self.inputs = torch.randn(SAMPLES, 6, generator=generator)
        self.targets = torch.randint(0, 3, (SAMPLES,), generator=generator)
        self.log, self.augment = log, augment

    def __len__(self):
        return SAMPLES

    def __getitem__(self, i):
        with open(self.log, "a") as f:
            f.write(f"{i}\n")
        x = self.inputs[i]
        if self.augment:
            x = x + 0.1 * torch.rand(6) + 0.1 * random.random() + 0.1 * float(np.random.rand())
        return (x, torch.tensor(i)), self.targets[i]


class Stream(IterableDataset):
    def __init__(self, dataset):
        self.dataset = dataset

    def __len__(self):
        return len(self.dataset)

    def __iter__(self):
        return (self.dataset[i] for i in range(len(self.dataset)))


class EveryOther(Sampler):
    """A custom sampler: even indices, then odd ones."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter([*range(0, self.n, 2), *range(1, self.n, 2)])

    def __len__(self):
        return self.n


def seed_numpy(worker_id):  # the usual worker_init_fn, from the worker's torch seed
    np.random.seed(torch.initial_seed() % 2**32)


def make_loader(kind, dataset, num_workers):
    workers = dict(num_workers=num_workers)
    if num_workers:
        workers.update(worker_init_fn=seed_numpy, multiprocessing_context="fork")
    if kind == "sequential":
        return DataLoader(dataset, batch_size=BATCH, **workers)
    if kind == "random":
        return DataLoader(dataset, batch_size=BATCH, shuffle=True, **workers)
    if kind == "random_generator":
        generator = torch.Generator().manual_seed(7)
        return DataLoader(dataset, batch_size=BATCH, shuffle=True, generator=generator, **workers)
    if kind == "drop_last":
        return DataLoader(dataset, batch_size=BATCH, shuffle=True, drop_last=True, **workers)
    if kind == "distributed":  # rank 1 of 2, given explicitly: one process plays one rank
        sampler = DistributedSampler(dataset, num_replicas=2, rank=1, shuffle=True, seed=3)
        return DataLoader(dataset, batch_size=BATCH, sampler=sampler, **workers)
    if kind == "batch_sampler":  # the user's own BatchSampler over a seeded RandomSampler
        sampler = RandomSampler(dataset, generator=torch.Generator().manual_seed(5))
        return DataLoader(dataset, batch_sampler=BatchSampler(sampler, BATCH, False), **workers)
    if kind == "unbatched":
        return DataLoader(dataset, batch_size=None, shuffle=True, **workers)
    if kind == "iterable":
        return DataLoader(Stream(dataset), batch_size=BATCH, **workers)
    if kind == "custom_sampler":
        return DataLoader(dataset, batch_size=BATCH, sampler=EveryOther(SAMPLES), **workers)
    if kind == "stateful":
        from torchdata.stateful_dataloader import StatefulDataLoader

        return StatefulDataLoader(dataset, batch_size=BATCH, shuffle=True, **workers)
    raise ValueError(kind)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(6, 16), nn.Linear(16, 3)
        self.drop = nn.Dropout(0.2)  # draws from the main process's generator
        self.seen = []

    def forward(self, x, index):
        if index.dim() == 0:  # an unbatched loader
            x, index = x[None], index[None]
        self.seen.append((index.clone(), x.detach().clone()))
        return self.fc2(self.drop(torch.relu(self.fc1(x))))


class Preempted(Exception):
    pass


def run(tmp_path, name, kind, num_workers, *, crash_at=None, resume=False, augment=True,
        num_epochs=2, loader=None):  # fmt: skip
    """A fit run; returns what it saw and where it ended. ``crash_at``: die at that loss call."""
    log = tmp_path / f"{name}.log"
    companion.seed_everything(0)
    dataset = Recorded(log, augment)
    if loader is None:
        loader = make_loader(kind, dataset, num_workers)
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    calls = [0]

    def loss_fn(outputs, targets):
        calls[0] += 1
        if calls[0] == crash_at:
            raise Preempted
        return F.cross_entropy(outputs, targets.reshape(-1))  # (an unbatched loader: one)

    torch.manual_seed(1234 if resume else 0)  # a resumed run must not depend on this
    checkpoint_dir = tmp_path / ("ckpt" if name != "full" else "full_ckpt")
    try:
        history = companion.fit(model, loader, optimizer, loss_fn, num_epochs=num_epochs,
                                device="cpu", checkpoint_dir=checkpoint_dir, checkpoint_every=1,
                                keep_last=2, resume=resume, progress=False)  # fmt: skip
    except Preempted:
        return None
    loaded = [int(line) for line in log.read_text().split()] if log.exists() else []
    return {
        "seen": model.seen,
        "state": {k: v.clone() for k, v in model.state_dict().items()},
        "loss": history.train_loss,
        "rng_after": torch.rand(4),
        "loaded": loaded,
        "batches": len(loader),
    }


def interrupted_and_resumed(tmp_path, kind, num_workers, consumed, **kwargs):
    """(uninterrupted, resumed): the second died after ``consumed`` batches of epoch 2."""
    full = run(tmp_path, "full", kind, num_workers, **kwargs)
    crash_at = full["batches"] + consumed + 1  # dies in the step after the checkpoint
    assert run(tmp_path, "crashed", kind, num_workers, crash_at=crash_at, **kwargs) is None
    resumed = run(tmp_path, "resumed", kind, num_workers, resume=True, **kwargs)
    return full, resumed


def assert_exact(full, resumed, consumed):
    skipped = full["batches"] + consumed
    assert len(resumed["seen"]) == len(full["seen"]) - skipped
    for (index_a, x_a), (index_b, x_b) in zip(full["seen"][skipped:], resumed["seen"]):
        assert torch.equal(index_a, index_b)  # the same samples, in the same order
        assert torch.equal(x_a, x_b)  # with the same random augmentation, bit for bit
    for key, value in full["state"].items():
        assert torch.equal(value, resumed["state"][key]), key
    assert resumed["loss"] == full["loss"]
    assert torch.equal(resumed["rng_after"], full["rng_after"])  # the same generator afterwards


def remaining_indices(full, consumed):
    seen = full["seen"][full["batches"] + consumed :]
    return sorted(int(i) for index, _ in seen for i in index.reshape(-1))


LOADERS = ["sequential", "random", "random_generator", "drop_last", "distributed", "batch_sampler",
           "unbatched"]  # fmt: skip


@pytest.mark.parametrize("num_workers", [0, 2])
@pytest.mark.parametrize("kind", LOADERS)
def test_resume_loads_only_what_is_left_and_is_exact(tmp_path, kind, num_workers):
    if kind == "unbatched" and num_workers:
        pytest.skip("batch_size=None with workers replays (tested below)")
    consumed = 3  # odd: with 2 workers, the resumed batches must start on worker 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReplayWarning)
        full, resumed = interrupted_and_resumed(tmp_path, kind, num_workers, consumed)
    assert len(full["loaded"]) == sum(len(index.reshape(-1)) for index, _ in full["seen"])
    assert_exact(full, resumed, consumed)
    # not one skipped sample fetched: the resumed run loaded exactly the rest of the epoch
    assert sorted(resumed["loaded"]) == remaining_indices(full, consumed)


@pytest.mark.parametrize("consumed", [1, 2, 4])
def test_workers_line_up_wherever_the_checkpoint_falls(tmp_path, consumed):
    full, resumed = interrupted_and_resumed(tmp_path, "random", 2, consumed)
    assert_exact(full, resumed, consumed)
    assert sorted(resumed["loaded"]) == remaining_indices(full, consumed)


@pytest.mark.parametrize(
    "kind, num_workers, reason",
    [
        ("iterable", 0, "IterableDataset"),
        ("custom_sampler", 0, "custom sampler EveryOther"),
        ("unbatched", 2, "batch_size=None"),
    ],
)
def test_other_loaders_replay_with_a_notice_and_stay_exact(tmp_path, kind, num_workers, reason):
    consumed = 3
    full = run(tmp_path, "full", kind, num_workers)
    run(tmp_path, "crashed", kind, num_workers, crash_at=full["batches"] + consumed + 1)
    with pytest.warns(ReplayWarning, match=rf"replays {consumed} batches .*{reason}"):
        resumed = run(tmp_path, "resumed", kind, num_workers, resume=True)
    assert_exact(full, resumed, consumed)
    assert len(resumed["loaded"]) > len(remaining_indices(full, consumed))  # it did reload


def test_a_checkpoint_without_worker_state_falls_back_to_replay(tmp_path):
    consumed = 3
    full = run(tmp_path, "full", "random", 2)
    run(tmp_path, "crashed", "random", 2, crash_at=full["batches"] + consumed + 1)
    newest = companion.latest_checkpoint(tmp_path / "ckpt")
    ckpt = torch.load(newest, weights_only=True)
    del ckpt["extra"]["fit"]["feed"]  # as an older companion wrote it
    torch.save(ckpt, newest)
    with pytest.warns(ReplayWarning, match="no random state for this loader's workers"):
        resumed = run(tmp_path, "resumed", "random", 2, resume=True)
    assert_exact(full, resumed, consumed)


@pytest.mark.filterwarnings("ignore:'set_vital' is deprecated")  # torchdata's own, not ours
@pytest.mark.parametrize("num_workers", [0, 2])
def test_a_stateful_dataloader_resumes_through_its_own_state(tmp_path, num_workers):
    pytest.importorskip("torchdata.stateful_dataloader")
    consumed = 3
    # StatefulDataLoader does not carry its workers' random state: no augmentation here
    full, resumed = interrupted_and_resumed(
        tmp_path, "stateful", num_workers, consumed, augment=num_workers == 0
    )
    assert_exact(full, resumed, consumed)
    assert sorted(resumed["loaded"]) == remaining_indices(full, consumed)


def test_an_epoch_boundary_resume_restores_the_loaders_own_generator(tmp_path):
    # DataLoader(generator=g): the next epoch's order comes from g, which a fresh process
    # rebuilds at its seed; the checkpoint must carry it
    full = run(tmp_path, "full", "random_generator", 0, num_epochs=3)
    run(tmp_path, "crashed", "random_generator", 0, crash_at=2 * full["batches"] + 1,
        num_epochs=3)  # fmt: skip
    for path in companion.checkpoint.list_checkpoints(tmp_path / "ckpt"):
        if torch.load(path, weights_only=True)["step"]:
            path.unlink()  # keep the end-of-epoch-2 checkpoint only
    resumed = run(tmp_path, "resumed", "random_generator", 0, resume=True, num_epochs=3)
    assert_exact(full, resumed, full["batches"])


def test_in_memory_loader_resumes_from_the_batch_without_gathering_the_rest(tmp_path):
    inputs, targets = torch.randn(SAMPLES, 6), torch.randint(0, 3, (SAMPLES,))

    def in_memory():
        return InMemoryLoader(inputs, torch.arange(SAMPLES), targets, batch_size=BATCH, seed=3)

    class Pairs:  # InMemoryLoader yields (inputs, index, targets); fit wants (inputs, targets)
        def __init__(self, loader):
            self.loader = loader

        def __len__(self):
            return len(self.loader)

        def __iter__(self):
            return self.iter_from(0)

        def iter_from(self, start):
            return (((x, i), y) for x, i, y in self.loader.iter_from(start))

        def state_dict(self):
            return self.loader.state_dict()

        def load_state_dict(self, state):
            self.loader.load_state_dict(state)

    assert resume_mode(in_memory()) == ("iter_from", "")
    kwargs = dict(augment=False)
    full = run(tmp_path, "full", None, 0, loader=Pairs(in_memory()), **kwargs)
    run(tmp_path, "crashed", None, 0, loader=Pairs(in_memory()), crash_at=len(in_memory()) + 4,
        **kwargs)  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReplayWarning)
        resumed = run(tmp_path, "resumed", None, 0, loader=Pairs(in_memory()), resume=True,
                      **kwargs)  # fmt: skip
    assert_exact(full, resumed, 3)


def test_in_memory_loader_iter_from_draws_the_same_order():
    a = InMemoryLoader(torch.arange(20), batch_size=6, seed=1)
    b = InMemoryLoader(torch.arange(20), batch_size=6, seed=1)
    whole = [ids for (ids,) in a]
    rest = [ids for (ids,) in b.iter_from(2)]
    assert [t.tolist() for t in rest] == [t.tolist() for t in whole[2:]]
    assert torch.equal(next(iter(a))[0], next(iter(b))[0])  # both generators moved alike
    with pytest.raises(ValueError, match="start_batch"):
        a.iter_from(-1)


def test_resume_modes():
    from torch.utils.data import TensorDataset

    data = TensorDataset(torch.arange(10))
    assert resume_mode(DataLoader(data, batch_size=2, shuffle=True))[0] == "skip"
    assert resume_mode([1, 2])[0] == "slice"
    mode, reason = resume_mode(DataLoader(data, num_workers=1, persistent_workers=True))
    assert mode == "replay" and "persistent_workers" in reason
    mode, reason = resume_mode(DataLoader(data, batch_size=2, in_order=False, num_workers=1))
    assert mode == "replay" and "in_order" in reason

    class Custom(DataLoader):
        def __iter__(self):
            return super().__iter__()

    mode, reason = resume_mode(Custom(data))
    assert mode == "replay" and "Custom" in reason
    assert resume_mode(object())[0] == "replay"


def test_a_feed_rejects_a_checkpoint_past_the_end_of_the_epoch():
    from torch.utils.data import TensorDataset

    feed = EpochFeed(DataLoader(TensorDataset(torch.arange(8)), batch_size=2), capture=False)
    with pytest.raises(ValueError, match="only 4 batches"):
        list(feed.epoch(start_batch=6))


@pytest.mark.slow
def test_torchrun_mid_epoch_resume_loads_only_the_rest_on_every_rank(tmp_path):
    from pathlib import Path

    from ._torchrun import torchrun as run_ranks

    script = Path(__file__).with_name("_resume_ddp_run.py")

    def torchrun(name, mode, stop_at=0):
        out = tmp_path / name
        out.mkdir()
        run_ranks(script, out, tmp_path / "ckpt", mode, stop_at, nproc=2, timeout=300)
        return [
            {
                **torch.load(out / f"rank{r}.pt", weights_only=True),
                "loaded": [int(i) for i in (out / f"rank{r}.log").read_text().split()],
            }
            for r in range(2)
        ]

    full = torchrun("full", "full")
    consumed = 3  # rank 0 asks to stop during batch 3 of epoch 2; every rank stops after it
    stopped = torchrun("stop", "stop", full[0]["batches"] + consumed)
    assert all(s["interrupted"] for s in stopped)
    resumed = torchrun("resumed", "resume")
    for rank in range(2):
        skipped = full[rank]["batches"] + consumed
        seen_full, seen_resumed = full[rank]["seen"][skipped:], resumed[rank]["seen"]
        assert len(seen_full) == len(seen_resumed)
        for (index_a, x_a), (index_b, x_b) in zip(seen_full, seen_resumed):
            assert torch.equal(index_a, index_b) and torch.equal(x_a, x_b), rank
        for key, value in full[rank]["state"].items():
            assert torch.equal(value, resumed[rank]["state"][key]), (rank, key)
        assert resumed[rank]["loss"] == full[rank]["loss"]
        expected = sorted(int(i) for index, _ in seen_full for i in index)
        assert sorted(resumed[rank]["loaded"]) == expected, rank  # this rank's rest, nothing more
