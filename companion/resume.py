"""Where a resumed epoch starts: skip what was done by sample index, never by loading it again.

A mid-epoch checkpoint records how many batches of the epoch were consumed and the random state
at the epoch's start. To continue exactly, the loader must yield the rest of that epoch's batches
in the same order, with the same random augmentations, as if it had never stopped. Iterating the
loader again and throwing the first batches away does that, but fetches, decodes and collates
every skipped sample: its cost grows with the position in the epoch.

:class:`EpochFeed` hands ``fit`` each epoch's batches and resumes in the cheapest exact way:

- ``"skip"``, a ``DataLoader`` over a map-style dataset with a standard sampler (sequential,
  random, subset-random, weighted, distributed; batched or not): redo only the random draws a
  DataLoader makes when an epoch starts (the workers' base seed, then the sampler's order), walk
  the sampler's indices past the consumed batches without touching the data, and load only the
  batches after the checkpoint. With ``num_workers > 0`` every batch brings its worker's random
  state back to the main process, so a checkpoint holds each worker's generators as they were
  after its last consumed batch. A resumed worker starts from those, with the same seed and the
  same share of the batches (batch ``k`` goes to worker ``k % num_workers``; empty placeholder
  batches keep that alignment), so random augmentations inside workers come out identical.
- ``"stateful"``, a DataLoader with its own ``state_dict``/``load_state_dict`` (torchdata's
  ``StatefulDataLoader``): its state at the checkpoint, restored through ``load_state_dict``.
- ``"iter_from"``, a loader with an ``iter_from(start_batch)`` method
  (:class:`~companion.loaders.InMemoryLoader`): the epoch from ``start_batch`` on.
- ``"slice"``, a list or tuple of batches: the rest of it.
- ``"replay"``, anything else (an iterable dataset, a custom sampler or loader class, persistent
  workers): iterate again past the consumed batches, with a :class:`ReplayWarning` that says how
  many and why.
"""

from __future__ import annotations

import itertools
import marshal
import random
import warnings
from typing import Any

import numpy as np
import torch
from torch.utils.data import (
    BatchSampler,
    DataLoader,
    DistributedSampler,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
    get_worker_info,
)

from companion.rng import set_rng_state

__all__ = ["EpochFeed", "ReplayWarning", "resume_mode", "saved_by_rank"]

# Samplers whose order depends only on their generator (or the global one) at the epoch's start.
_STANDARD_SAMPLERS = (
    SequentialSampler,
    RandomSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
    DistributedSampler,
)
_PAD = "companion.resume.pad"  # a placeholder batch: no sample behind it
_BATCH = "companion.resume.batch"


# Loader state: what a loader needs to replay an epoch, kept with resume (checkpoints store it).


def get_loader_state(loader) -> dict | None:
    """What a loader needs to replay its next epoch's order (beyond the global RNG)."""
    if loader is None:
        return None
    if isinstance(loader, torch.utils.data.DataLoader):
        state = {}
        if loader.generator is not None:
            state["generator"] = loader.generator.get_state()
        sampler = getattr(loader.batch_sampler, "sampler", loader.sampler)  # the one that orders
        if getattr(sampler, "generator", None) is not None:
            state["sampler_generator"] = sampler.generator.get_state()
        return state
    if callable(getattr(loader, "state_dict", None)):
        return {"loader": loader.state_dict()}
    return None


def set_loader_state(loader, state: dict | None) -> None:
    """Put back what :func:`get_loader_state` read (a no-op for None or an empty state)."""
    if loader is None or not state:
        return
    if isinstance(loader, torch.utils.data.DataLoader):
        if "generator" in state and loader.generator is not None:
            loader.generator.set_state(state["generator"])
        sampler = getattr(loader.batch_sampler, "sampler", loader.sampler)
        if "sampler_generator" in state and getattr(sampler, "generator", None) is not None:
            sampler.generator.set_state(state["sampler_generator"])
    elif "loader" in state and callable(getattr(loader, "load_state_dict", None)):
        loader.load_state_dict(state["loader"])


class ReplayWarning(UserWarning):
    """A mid-epoch resume iterates the loader past the consumed batches, loading each again."""


def resume_mode(loader) -> tuple[str, str]:
    """How a mid-epoch resume of ``loader`` gets past the batches already consumed.

    Args:
        loader: what ``fit`` trains on.

    Returns:
        ``(mode, reason)``: mode ``"skip"``, ``"stateful"``, ``"iter_from"``, ``"slice"`` or
        ``"replay"`` (see the module docstring); ``reason`` says why a loader is replayed
        (empty otherwise).

    Example:
        >>> from torch.utils.data import TensorDataset
        >>> resume_mode(DataLoader(TensorDataset(torch.arange(8)), batch_size=2, shuffle=True))
        ('skip', '')
    """
    if isinstance(loader, (list, tuple)):
        return "slice", ""
    name = type(loader).__name__
    if not isinstance(loader, DataLoader):
        if callable(getattr(loader, "iter_from", None)):
            return "iter_from", ""
        return "replay", f"{name} is not a DataLoader, so its order has no sampler to rebuild"
    if callable(getattr(loader, "state_dict", None)) and callable(
        getattr(loader, "load_state_dict", None)
    ):
        return "stateful", ""
    cls = type(loader)
    if cls.__iter__ is not DataLoader.__iter__ or cls._get_iterator is not DataLoader._get_iterator:
        return "replay", f"{name} changes how a DataLoader iterates"
    if isinstance(loader.dataset, IterableDataset):
        return "replay", "an IterableDataset has no sample indices to skip by"
    batches = loader.batch_sampler
    if batches is not None and type(batches) is not BatchSampler:
        return "replay", f"the custom batch sampler {type(batches).__name__} may batch differently"
    sampler = batches.sampler if batches is not None else loader.sampler
    if type(sampler) not in _STANDARD_SAMPLERS:
        return "replay", f"the custom sampler {type(sampler).__name__} may order differently"
    if loader.persistent_workers:
        return "replay", "persistent_workers=True keeps workers and their RNG across epochs"
    if not getattr(loader, "in_order", True):
        return "replay", "in_order=False yields batches in the order workers finish them"
    if loader.num_workers > 0 and batches is None:
        return "replay", "with batch_size=None and workers, batches cannot be lined up with workers"
    return "skip", ""


class EpochFeed:
    """The batches ``fit`` trains on, epoch by epoch, resuming mid-epoch without reloading.

    ``fit`` builds one per call, asks :meth:`epoch` for each epoch's batches and puts
    :meth:`state` in every checkpoint; a resumed call passes that state back as ``saved``.

    Args:
        loader: the training loader (already sharded under torchrun).
        capture: record the workers' random state with each batch (needed for exact resume
            with ``num_workers > 0``; ``fit`` turns it on when it writes checkpoints).
        saved: :meth:`state` from the checkpoint being resumed, or None.
        mid_epoch: whether that checkpoint was taken inside an epoch. At an epoch boundary the
            loader's own generators are restored from ``saved`` at once; inside an epoch ``fit``
            restores them as they were when the epoch began.
        rank, world_size: this process under torchrun (each rank has its own workers).

    Example:
        >>> from torch.utils.data import TensorDataset
        >>> loader = DataLoader(TensorDataset(torch.arange(8)), batch_size=2)
        >>> feed = EpochFeed(loader, capture=False)
        >>> [inputs.tolist() for (inputs,) in feed.epoch(start_batch=3)]  # batch 3 of 0..3
        [[6, 7]]
    """

    def __init__(self, loader, *, capture: bool, saved: dict | None = None,
                 mid_epoch: bool = False, rank: int = 0, world_size: int = 1):  # fmt: skip
        self.loader = loader
        self.mode, self.reason = resume_mode(loader)
        skip = self.mode == "skip"
        self.num_workers = loader.num_workers if skip else 0
        self.capture = bool(capture) and self.num_workers > 0
        self.rank, self.world_size = rank, world_size
        self.saved = saved or {}
        self._workers: dict[int, Any] = {}  # worker id -> its random state after its last batch
        if not mid_epoch and self.saved.get("loader") is not None:
            self._restore_loader(self.saved["loader"])

    def epoch(self, start_batch: int = 0, resume_rng: dict | None = None):
        """This epoch's batches from ``start_batch`` on, as an iterable.

        Call it right when the epoch begins. To resume inside an epoch, first restore the
        random state (and the loader's generators) of the epoch's start.

        Args:
            start_batch: batches of this epoch already consumed (0 for a fresh epoch).
            resume_rng: the random state to continue with (a checkpoint's ``"rng"``), set once
                the rest of the epoch is lined up; None to leave the generators alone.

        Returns:
            An iterable over the batches, once.

        Raises:
            ValueError: the epoch has fewer than ``start_batch`` batches.
        """
        if start_batch == 0:
            self._workers = {}
            if not self.capture:
                return self.loader
            index = self.loader.batch_sampler
            return _Batches(self, self._loader_over(index, self.loader.generator, {}), None)
        if self.mode == "slice":
            return _Batches(self, self.loader[start_batch:], resume_rng)
        if self.mode == "iter_from":
            return _Batches(self, _From(self.loader, start_batch), resume_rng)
        saved_loader = self.saved.get("loader") or {}
        if self.mode == "stateful" and "stateful" in saved_loader:
            self.loader.load_state_dict(saved_loader["stateful"])
            return _Batches(self, self.loader, resume_rng)
        reason = self.reason or "the checkpoint holds no state for this loader"
        if self.mode == "skip":
            workers = saved_by_rank({"feed": self.saved}, self.rank, "workers", None)
            same = self.saved.get("num_workers", 0) == self.num_workers
            if self.num_workers == 0 or (workers is not None and same):
                return self._skip(start_batch, resume_rng, workers or {})
            reason = (
                "the checkpoint holds no random state for this loader's workers (written by an "
                "older companion, or with another num_workers or world size)"
            )
        if self.rank == 0:
            warnings.warn(
                f"resuming mid-epoch replays {start_batch} batches through the loader (it loads "
                f"them again and throws them away) because {reason}",
                ReplayWarning,
                stacklevel=3,
            )
        return _Replay(self.loader, start_batch, resume_rng)

    def state(self, **mine) -> dict:
        """What a checkpoint taken now needs to resume this loader.

        Under torchrun, call it on every rank: each rank's worker states and ``mine`` (values
        of this rank's own, such as ``fit``'s running tally) are gathered for rank 0 to save;
        :func:`saved_by_rank` reads them back.
        """
        if self.mode == "stateful":
            loader = {**(get_loader_state(self.loader) or {}), "stateful": self.loader.state_dict()}
        else:
            loader = get_loader_state(self.loader)
        state = {"mode": self.mode, "loader": loader}
        if self.capture:
            workers = {worker: _plain_rng(raw) for worker, raw in sorted(self._workers.items())}
            mine["workers"] = workers
            state["num_workers"] = self.num_workers
        state["ranks"] = _gather(mine, self.rank, self.world_size)
        return state

    def _restore_loader(self, state: dict) -> None:
        set_loader_state(self.loader, {k: v for k, v in state.items() if k != "stateful"})
        if self.mode == "stateful" and "stateful" in state:
            self.loader.load_state_dict(state["stateful"])

    def _skip(self, start_batch: int, resume_rng: dict, workers: dict):
        loader = self.loader
        # Every DataLoader iterator first draws its workers' base seed from loader.generator
        # (the global generator when None); a private copy of that generator, taken before the
        # draw, gives the resumed loader the same base seed without touching the real one twice.
        source = loader.generator
        base_seed = torch.Generator()
        base_seed.set_state(source.get_state() if source is not None else torch.get_rng_state())
        torch.empty((), dtype=torch.int64).random_(generator=source)
        # The sampler then draws its order (RandomSampler: from its generator, or a seed from the
        # global one) on its first index; walking past the consumed batches loads nothing.
        index = loader.batch_sampler if loader.batch_sampler is not None else loader.sampler
        rest = iter(index)
        skipped = sum(1 for _ in itertools.islice(rest, start_batch))
        if skipped < start_batch:
            raise ValueError(
                f"the checkpoint was taken after batch {start_batch} of the epoch, but this "
                f"loader's epoch has only {skipped} batches; resume with the same data and "
                f"batch size as the run that wrote it"
            )
        pads = start_batch % self.num_workers if self.num_workers else 0
        remaining = _Index(itertools.chain([[]] * pads, rest), len(index) - start_batch + pads)
        self._workers = dict(workers)
        return _Batches(self, self._loader_over(remaining, base_seed, workers), resume_rng)

    def _loader_over(self, index, generator, workers: dict) -> DataLoader:
        """A DataLoader like the user's over ``index`` (batches, or samples when unbatched)."""
        loader = self.loader
        kwargs = dict(
            num_workers=loader.num_workers,
            collate_fn=loader.collate_fn,
            pin_memory=loader.pin_memory,
            timeout=loader.timeout,
            worker_init_fn=loader.worker_init_fn,
            multiprocessing_context=loader.multiprocessing_context,
            generator=generator,
        )
        if loader.num_workers > 0:
            kwargs["prefetch_factor"] = loader.prefetch_factor
        if loader.pin_memory_device:
            kwargs["pin_memory_device"] = loader.pin_memory_device
        if self.capture:
            kwargs["collate_fn"] = _Capture(loader.collate_fn)
        if workers:
            kwargs["worker_init_fn"] = _WorkerStart(loader.worker_init_fn, workers)
        if loader.batch_sampler is not None:
            kwargs["batch_sampler"] = index
        else:
            kwargs.update(sampler=index, batch_size=None)
        with warnings.catch_warnings():  # the user's own loader already said what it had to say
            warnings.simplefilter("ignore")
            return DataLoader(loader.dataset, **kwargs)


class _Index:
    """The rest of an epoch's sampler, iterated once, with a length for DataLoader."""

    def __init__(self, items, length: int):
        self.items, self.length = items, length

    def __iter__(self):
        return self.items  # the same iterator every time: a DataLoader asks twice

    def __len__(self) -> int:
        return self.length


class _From:
    """``loader.iter_from(start_batch)`` as an iterable."""

    def __init__(self, loader, start_batch: int):
        self.loader, self.start_batch = loader, start_batch

    def __iter__(self):
        return self.loader.iter_from(self.start_batch)


class _Batches:
    """Iterates a loader built by :class:`EpochFeed`: unwraps captured batches, drops pads."""

    def __init__(self, feed: EpochFeed, loader, resume_rng: dict | None):
        self.feed, self.loader, self.resume_rng = feed, loader, resume_rng

    def __iter__(self):
        batches = iter(self.loader)
        if self.resume_rng is not None:  # the rest of the epoch is lined up: continue from here
            set_rng_state(self.resume_rng)
        if not isinstance(self.loader, DataLoader) or not self.feed.capture:
            yield from batches
            return
        record = self.feed._workers
        for item in batches:
            if isinstance(item, str):  # a pad
                continue
            _, worker, rng, batch = item
            record[worker] = rng
            yield batch


class _Replay:
    """The old way: iterate the loader and throw away the consumed batches."""

    def __init__(self, loader, start_batch: int, resume_rng: dict | None):
        self.loader, self.start_batch, self.resume_rng = loader, start_batch, resume_rng

    def __iter__(self):
        batches = iter(self.loader)
        for _ in range(self.start_batch):
            next(batches)
        if self.resume_rng is not None:
            set_rng_state(self.resume_rng)
        yield from batches


class _Capture:
    """A worker-side collate_fn: the batch, tagged with its worker and that worker's RNG state."""

    def __init__(self, collate_fn):
        self.collate_fn = collate_fn

    def __call__(self, samples):
        if isinstance(samples, list) and not samples:
            return _PAD  # BatchSampler never yields an empty batch; only our pads are empty
        batch = self.collate_fn(samples)
        info = get_worker_info()
        return (_BATCH, info.id if info is not None else 0, _worker_rng(), batch)


class _WorkerStart:
    """A worker_init_fn: the user's, then the random state this worker had at the checkpoint."""

    def __init__(self, worker_init_fn, states: dict):
        self.worker_init_fn, self.states = worker_init_fn, states

    def __call__(self, worker_id: int) -> None:
        if self.worker_init_fn is not None:
            self.worker_init_fn(worker_id)
        state = self.states.get(worker_id)
        if state is not None:
            set_rng_state(_plain_rng(state))


def saved_by_rank(fit_state: dict, rank: int, key: str, default):
    """``key`` as this rank saved it through :meth:`EpochFeed.state`, else ``default``."""
    ranks = (fit_state.get("feed") or {}).get("ranks") or {}
    return ranks.get(rank, {}).get(key, default)


def _worker_rng() -> bytes:
    # One bytes object, so the queue pickles it in one piece and pin_memory leaves it alone;
    # marshal, a third faster than pickle here, is safe as it never leaves this run's processes.
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    numpy_state = (kind, keys.tobytes(), int(pos), int(has_gauss), float(cached))
    return marshal.dumps((torch.get_rng_state().numpy().tobytes(), random.getstate(), numpy_state))


def _plain_rng(raw) -> dict:
    """A worker's state in :func:`companion.rng.get_rng_state`'s format (checkpoint-safe)."""
    if isinstance(raw, dict):
        return raw
    torch_state, (version, internal, gauss), (kind, keys, pos, has_gauss, cached) = marshal.loads(
        raw
    )
    return {
        "torch": torch.frombuffer(bytearray(torch_state), dtype=torch.uint8),
        "python": {"version": version, "state": list(internal), "gauss": gauss},
        "numpy": {
            "kind": str(kind),
            "keys": torch.from_numpy(np.frombuffer(keys, dtype=np.uint32).astype(np.int64)),
            "pos": int(pos),
            "has_gauss": int(has_gauss),
            "cached_gaussian": float(cached),
        },
    }


def _gather(mine: dict, rank: int, world_size: int) -> dict:
    """``{rank: mine}`` for every rank (a collective under torchrun: call it on all ranks)."""
    if world_size <= 1:
        return {rank: mine}
    import torch.distributed as dist

    everyone: list = [None] * world_size
    dist.all_gather_object(everyone, mine)
    return dict(enumerate(everyone))
