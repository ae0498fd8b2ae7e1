"""What a mid-epoch resume costs, against the work that is left, measured side by side.

A DataLoader whose ``__getitem__`` costs about 0.5 ms (a sleep: the price of reading and
decoding one sample, which workers overlap as they would real I/O), 100 batches an epoch.
One run writes checkpoints at 10 %, 50 % and 90 % of the epoch. Then, for each checkpoint and
in turn within one process:

- ``resumed``: ``fit(..., resume=True)`` from that checkpoint to the end of the epoch;
- ``remaining``: a fresh ``fit`` over exactly the samples that are left, in batches of the same
  size (the same fit call, workers and end-of-epoch checkpoint: the work a resume cannot
  avoid), and the same again (``A/A``: the noise floor of these ratios);
- ``replayed``: the same resume through a loader ``fit`` cannot skip in (a DataLoader subclass
  with its own ``__iter__``), which iterates past the consumed batches, loading them all, as
  every resume did before skipping by sample index.

The table gives seconds and the ratios resumed/remaining (target: at most 1.3 wherever the
checkpoint falls) and replayed/remaining, for sequential and random samplers with 0 and 2
workers; "start-up" is resumed minus remaining, the fixed price of resuming (reading the
checkpoint, rebuilding the order). A last line measures what carrying each worker's random
state with its batches (needed for exact resume with workers) costs a worker, in CPU time.

Checkpoints go to /dev/shm where there is one: on a busy disk, fsync alone varies by more than
the differences measured here.

    python benchmarks/resume.py            # about four minutes on 2 cores
    python benchmarks/resume.py --quick    # about a minute, noisier
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
import warnings
from pathlib import Path

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, Subset, default_collate

import companion
from companion.checkpoint import checkpoint_name
from companion.resume import ReplayWarning, _Capture

CLOCK = time.perf_counter  # wall time: the cost is waiting for samples, in workers too


class Costly(Dataset):
    """Samples of 64 features and a label; each load sleeps ``cost`` seconds first."""

    def __init__(self, samples: int, cost: float):
        generator = torch.Generator().manual_seed(0)
        self.inputs = torch.randn(samples, 64, generator=generator)
        self.targets = torch.randint(0, 10, (samples,), generator=generator)
        self.cost = cost

    def __len__(self):
        return len(self.inputs)

    def __getitem__(self, i):
        if self.cost:
            time.sleep(self.cost)
        return self.inputs[i], self.targets[i]


class Unskippable(DataLoader):
    """A DataLoader that iterates its own way, so resuming must replay it."""

    def __iter__(self):
        return super().__iter__()


def train(loader, checkpoint_dir, **kwargs) -> float:
    """Seconds for one fit call (model and optimizer built outside the clock)."""
    companion.seed_everything(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    start = CLOCK()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReplayWarning)
        companion.fit(model, loader, optimizer, nn.CrossEntropyLoss(), num_epochs=1, device="cpu",
                      checkpoint_dir=checkpoint_dir, progress=False, **kwargs)  # fmt: skip
    return CLOCK() - start


def loader_for(dataset, sampler: str, workers: int, batch_size: int, cls=DataLoader):
    return cls(dataset, batch_size=batch_size, shuffle=sampler == "random", num_workers=workers)


def measure(dataset, sampler, workers, batch_size, positions, repeats, tmp: Path) -> list[dict]:
    batches = len(loader_for(dataset, sampler, workers, batch_size))
    every = batches // 10
    saved = tmp / f"{sampler}-{workers}"
    train(loader_for(dataset, sampler, workers, batch_size), saved,
          checkpoint_every=every, keep_last=10**6)  # fmt: skip
    rows = []
    for fraction in positions:
        step = round(batches * fraction)
        checkpoint = saved / checkpoint_name(0, step)
        left = Subset(dataset, range(step * batch_size, len(dataset)))
        times: dict[str, list[float]] = {
            "resumed": [],
            "remaining": [],
            "again": [],
            "replayed": [],
        }
        for r in range(repeats):
            order = list(times) if r % 2 == 0 else list(times)[::-1]
            for name in order:
                run_dir = tmp / f"run-{sampler}-{workers}-{step}-{name}-{r}"
                if name in ("remaining", "again"):
                    loader = DataLoader(left, batch_size=batch_size, num_workers=workers)
                    times[name].append(train(loader, run_dir))
                    shutil.rmtree(run_dir)
                    continue
                run_dir.mkdir()
                shutil.copy(checkpoint, run_dir / checkpoint.name)
                cls = DataLoader if name == "resumed" else Unskippable
                loader = loader_for(dataset, sampler, workers, batch_size, cls)
                times[name].append(train(loader, run_dir, resume=True))
                shutil.rmtree(run_dir)
        rows.append(
            {
                "sampler": sampler,
                "workers": workers,
                "at": f"{fraction:.0%}",
                "left": batches - step,
                **{name: statistics.median(t) for name, t in times.items()},
                "ratio": statistics.median(
                    a / b for a, b in zip(times["resumed"], times["remaining"])
                ),
                "noise": statistics.median(
                    a / b for a, b in zip(times["again"], times["remaining"])
                ),
                "replay_ratio": statistics.median(
                    a / b for a, b in zip(times["replayed"], times["remaining"])
                ),
                "startup": statistics.median(
                    a - b for a, b in zip(times["resumed"], times["remaining"])
                ),
            }
        )
    return rows


def capture_cost(batch_size: int, rounds: int = 7, calls: int = 300) -> float:
    """Microseconds of CPU a worker spends per batch to send its RNG state along (fit's capture).

    The collate step with and without capture, alternated, timed in process CPU time: the
    cost lives in the worker, where wall time on a shared machine would drown it.
    """
    samples = [Costly(batch_size, 0.0)[i] for i in range(batch_size)]
    runs = {"plain": default_collate, "capture": _Capture(default_collate)}
    times: dict[str, list[float]] = {name: [] for name in runs}
    for r in range(rounds + 1):
        for name, collate in runs.items() if r % 2 == 0 else list(runs.items())[::-1]:
            start = time.process_time()
            for _ in range(calls):
                collate(samples)
            if r:  # the first round warms up
                times[name].append((time.process_time() - start) / calls)
    return statistics.median(a - b for a, b in zip(times["capture"], times["plain"])) * 1e6


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer repeats, 50 batches (noisier)")
    parser.add_argument(
        "--cost-ms", type=float, default=0.5, help="sleep per __getitem__, ms (default 0.5)"
    )
    parser.add_argument("--batch-size", type=int, default=32, help="batch size (default 32)")
    parser.add_argument(
        "--batches", type=int, default=None, help="batches an epoch (default 100, quick 50)"
    )
    parser.add_argument(
        "--repeats", type=int, default=None, help="interleaved repeats (default 5, quick 3)"
    )
    parser.add_argument(
        "--threads", type=int, default=1, help="torch threads (default 1: least noise)"
    )
    parser.add_argument("--workers", default="0,2", help="num_workers to try (default 0,2)")
    parser.add_argument(
        "--samplers", default="sequential,random", help="samplers (default sequential,random)"
    )
    args = parser.parse_args(argv)
    batches = args.batches or (50 if args.quick else 100)
    repeats = args.repeats or (3 if args.quick else 5)
    torch.set_num_threads(args.threads)
    dataset = Costly(batches * args.batch_size, args.cost_ms / 1000)
    print(f"{batches} batches of {args.batch_size} an epoch, {args.cost_ms} ms per __getitem__, "
          f"MLP 64-128-10, {repeats} interleaved repeat(s), wall time, torch {torch.__version__}")  # fmt: skip

    rows = []
    shm = Path("/dev/shm")
    with tempfile.TemporaryDirectory(dir=shm if shm.is_dir() else None) as tmp:
        for sampler in args.samplers.split(","):
            for workers in (int(w) for w in args.workers.split(",")):
                rows += measure(dataset, sampler, workers, args.batch_size, (0.1, 0.5, 0.9),
                                repeats, Path(tmp))  # fmt: skip

    print(f"\n{'sampler':<11}{'workers':>8}{'at':>5}{'left':>6}{'remaining s':>13}{'resumed s':>11}"
          f"{'ratio':>7}{'start-up ms':>13}{'A/A':>6}{'replayed s':>12}{'ratio':>7}")  # fmt: skip
    for row in rows:
        print(f"{row['sampler']:<11}{row['workers']:>8}{row['at']:>5}{row['left']:>6}"
              f"{row['remaining']:>13.3f}{row['resumed']:>11.3f}{row['ratio']:>7.2f}"
              f"{row['startup'] * 1e3:>13.0f}{row['noise']:>6.2f}{row['replayed']:>12.3f}"
              f"{row['replay_ratio']:>7.2f}")  # fmt: skip
    worst = max(rows, key=lambda row: row["ratio"])
    startup = statistics.median(row["startup"] for row in rows)
    print(f"\nworst resumed/remaining {worst['ratio']:.2f} ({worst['sampler']}, {worst['workers']} "
          f"workers, at {worst['at']}; target <= 1.3); median start-up {startup * 1e3:.0f} ms; "
          f"worst replayed/remaining {max(row['replay_ratio'] for row in rows):.2f}; "
          f"A/A ratios {min(r['noise'] for r in rows):.2f}-{max(r['noise'] for r in rows):.2f}")  # fmt: skip

    micros = capture_cost(args.batch_size)
    share = micros / (args.cost_ms * 1e3 * args.batch_size)
    print(f"carrying each worker's RNG state with its batch: {micros:.0f} us of worker CPU a "
          f"batch, {share:.2%} of what loading a batch of this dataset costs")  # fmt: skip


if __name__ == "__main__":
    main()
