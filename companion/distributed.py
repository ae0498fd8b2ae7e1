"""Running ``fit`` under ``torchrun``: process group, DDP wrapping, data sharding, rank 0 I/O.

``fit`` calls these itself when it finds torchrun's environment (``WORLD_SIZE`` > 1), so the
same training script runs as one process or as ``torchrun --nproc_per_node=N script.py``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, DistributedSampler, RandomSampler

__all__ = ["DistContext", "setup_distributed"]


@dataclass
class DistContext:
    """Where this process stands in a (possibly one-process) run."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    created_group: bool = False
    wrapped: list = field(default_factory=list, repr=False)  # the DDP modules made by wrap()

    @property
    def enabled(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def wrap(self, model: nn.Module, device: torch.device) -> nn.Module:
        """DistributedDataParallel around ``model`` (already on ``device``); itself when alone."""
        if not self.enabled:
            return model
        device_ids = [device.index] if device.type == "cuda" else None
        ddp = nn.parallel.DistributedDataParallel(model, device_ids=device_ids)
        self.wrapped.append(ddp)
        return ddp

    def shard(self, loader, *, shuffle: bool | None = None):
        """The same loader over this rank's shard (a DistributedSampler), or ``loader`` alone.

        Keeps batch size, workers, collate_fn, pin_memory and drop_last. Shuffling follows the
        original loader (a RandomSampler means shuffle), seeded identically on every rank.
        """
        if not self.enabled or loader is None:
            return loader
        if not isinstance(loader, DataLoader):
            raise TypeError(
                f"under torchrun, fit needs DataLoaders to shard the data across ranks; "
                f"got {type(loader).__name__}. Build a DataLoader over your dataset."
            )
        if isinstance(loader.sampler, DistributedSampler):
            return loader  # already sharded by the caller
        if loader.batch_size is None:
            raise ValueError("under torchrun, fit needs a DataLoader with a batch_size")
        if shuffle is None:
            shuffle = isinstance(loader.sampler, RandomSampler)
        seed = torch.initial_seed() % 2**31  # equal on every rank after seed_everything
        sampler = DistributedSampler(
            loader.dataset, num_replicas=self.world_size, rank=self.rank, shuffle=shuffle, seed=seed
        )
        return DataLoader(
            loader.dataset,
            batch_size=loader.batch_size,
            sampler=sampler,
            num_workers=loader.num_workers,
            collate_fn=loader.collate_fn,
            pin_memory=loader.pin_memory,
            drop_last=loader.drop_last,
            persistent_workers=loader.persistent_workers,
            worker_init_fn=loader.worker_init_fn,
        )

    def set_epoch(self, loader, epoch: int) -> None:
        sampler = getattr(loader, "sampler", None)
        if isinstance(sampler, DistributedSampler):
            sampler.set_epoch(epoch)  # a new, rank-consistent shuffle every epoch

    def mean(self, values: dict) -> dict:
        """Average numeric values across ranks (shards are equal-sized under DistributedSampler)."""
        if not self.enabled or not values:
            return values
        keys = sorted(k for k, v in values.items() if isinstance(v, (int, float)))
        tensor = torch.tensor([float(values[k]) for k in keys], dtype=torch.float64)
        tensor = tensor.to(_comm_device())
        dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
        averaged = (tensor / self.world_size).tolist()
        return {**values, **dict(zip(keys, averaged))}

    def any(self, flag: bool) -> bool:
        """True on every rank if it is True on any (so all ranks stop at the same step)."""
        if not self.enabled:
            return flag
        tensor = torch.tensor([1.0 if flag else 0.0], device=_comm_device())
        dist.all_reduce(tensor, op=dist.ReduceOp.MAX)
        return bool(tensor.item())

    def barrier(self) -> None:
        if self.enabled:
            dist.barrier()

    def close(self) -> None:
        """Release DDP's reducers, then the process group this context created.

        DDP's reducer holds the process group. Freed after ``destroy_process_group``, it would
        drop the group's last reference while holding the GIL, and gloo's destructor then waits
        for a worker thread that needs the GIL to free a finished collective's tensor: torch 2.13
        hung there at the end of about one 2-rank CPU run in two. Freed here, while the group is
        still registered, the reducer is not the last holder; the group goes with
        ``destroy_process_group``, whose Python binding releases the GIL first.
        """
        for ddp in self.wrapped:
            for name in ("logger", "reducer"):  # the logger holds the reducer too
                if name in ddp.__dict__:
                    delattr(ddp, name)
        self.wrapped.clear()
        if self.created_group and dist.is_initialized():
            dist.destroy_process_group()


def _comm_device() -> torch.device:
    return torch.device("cuda") if dist.get_backend() == "nccl" else torch.device("cpu")


def setup_distributed(device: torch.device) -> tuple[DistContext, torch.device]:
    """Join torchrun's process group if this process was started by torchrun.

    Returns the context and the device this rank trains on (``cuda:LOCAL_RANK`` on GPUs).
    Uses NCCL on CUDA and gloo on the CPU.
    """
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if world_size <= 1:
        return DistContext(), device
    rank, local_rank = int(os.environ["RANK"]), int(os.environ.get("LOCAL_RANK", "0"))
    if device.type == "cuda":
        device = torch.device("cuda", local_rank)
        torch.cuda.set_device(device)
    created = False
    if not dist.is_initialized():
        dist.init_process_group(backend="nccl" if device.type == "cuda" else "gloo")
        created = True
    return DistContext(rank, world_size, local_rank, created), device
