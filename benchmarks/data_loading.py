"""How much faster is InMemoryLoader than DataLoader(TensorDataset), and is it near the floor?

Measured side by side in one process, repeats interleaved, medians reported:

1. batches per second of ``InMemoryLoader`` against ``DataLoader(TensorDataset(...))`` (both
   shuffling, ``num_workers=0``) over the same tensors and batch size: the digits (64 features,
   batch 32; target >= 10x) and MNIST-shaped tensors (784 features, batch 64; target >= 5x);
2. one training epoch on the digits with ``InMemoryLoader`` against the pure compute floor:
   forward, backward and step of the same model on batches made beforehand (target <= 1.15x).

Run: ``python benchmarks/data_loading.py`` (a minute or two) or ``--quick`` (seconds).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Callable, Iterable

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from companion.data import digits
from companion.loaders import InMemoryLoader


def _drain(loader: Iterable) -> int:
    count = 0
    for _ in loader:
        count += 1
    return count


def _interleaved(fns: dict[str, Callable[[], None]], repeats: int) -> dict[str, list[float]]:
    """Seconds of each callable per repeat, run in turn ``repeats`` times after a warm-up."""
    for fn in fns.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            gc.collect()
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return times


def _median_ratio(numerator: list[float], denominator: list[float]) -> float:
    """Median of the per-repeat ratios: runs next to each other share the machine's load."""
    return statistics.median(a / b for a, b in zip(numerator, denominator))


def loader_case(
    inputs: torch.Tensor, targets: torch.Tensor, batch_size: int, repeats: int
) -> tuple[dict[str, float], float]:
    """Median batches/s of each loader, and the median per-repeat speed-up."""
    fast = InMemoryLoader(inputs, targets, batch_size=batch_size, shuffle=True, seed=0)
    generator = torch.Generator().manual_seed(0)
    plain = DataLoader(
        TensorDataset(inputs, targets), batch_size=batch_size, shuffle=True, generator=generator
    )
    assert len(fast) == len(plain)
    times = _interleaved({"fast": lambda: _drain(fast), "plain": lambda: _drain(plain)}, repeats)
    rates = {name: len(fast) / statistics.median(ts) for name, ts in times.items()}
    return rates, _median_ratio(times["plain"], times["fast"])


def epoch_case(repeats: int) -> dict[str, list[float]]:
    """Seconds per epoch, per repeat: the floor, InMemoryLoader and DataLoader."""
    train_ds, _ = digits(seed=0)
    inputs, targets = train_ds.tensors
    inputs = inputs.flatten(1)  # (N, 64)
    batch_size = 32
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    def train(batches: Iterable) -> None:
        for xb, yb in batches:
            optimizer.zero_grad(set_to_none=True)
            loss_fn(model(xb), yb).backward()
            optimizer.step()

    order = torch.randperm(len(inputs), generator=torch.Generator().manual_seed(0))
    premade = [
        (inputs[idx].clone(), targets[idx].clone()) for idx in order.split(batch_size)
    ]  # the floor: no loading at all
    fast = InMemoryLoader(inputs, targets, batch_size=batch_size, seed=0)
    plain = DataLoader(TensorDataset(inputs, targets), batch_size=batch_size, shuffle=True)
    return _interleaved(
        {
            "floor": lambda: train(premade),
            "fast": lambda: train(fast),
            "plain": lambda: train(plain),
        },
        repeats,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--quick", action="store_true", help="fewer repeats, smaller MNIST case")
    parser.add_argument(
        "--repeats",
        type=int,
        default=None,
        help="repeats per measurement; None means 9 for loaders and 41 for epochs (quick: 3, 11)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch intra-op threads; one is fastest and steadiest for models this small",
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    repeats = args.repeats or (3 if args.quick else 9)
    epoch_repeats = args.repeats or (11 if args.quick else 41)
    torch.set_num_threads(args.threads)
    mnist_n = 10_000 if args.quick else 60_000

    print(
        f"data loading benchmark: torch {torch.__version__}, {args.threads} thread(s), "
        f"{repeats} (loaders) and {epoch_repeats} (epochs) interleaved repeats, medians"
    )
    train_ds, _ = digits(seed=0)
    digit_inputs, digit_targets = train_ds.tensors
    generator = torch.Generator().manual_seed(0)
    cases = [
        ("digits, 64 features, batch 32", digit_inputs.flatten(1), digit_targets, 32, 10.0),
        (
            f"MNIST-shaped ({mnist_n}), 784 features, batch 64",
            torch.rand(mnist_n, 784, generator=generator),
            torch.randint(0, 10, (mnist_n,), generator=generator),
            64,
            5.0,
        ),
    ]
    met = []
    print()
    header = f"{'case':<44} {'InMemoryLoader':>16} {'DataLoader':>13} {'ratio':>7}  target"
    print(header)
    print("-" * len(header))
    for name, inputs, targets, batch_size, target in cases:
        rates, ratio = loader_case(inputs, targets, batch_size, repeats)
        met.append(ratio >= target)
        print(
            f"{name:<44} {rates['fast']:>12,.0f} b/s {rates['plain']:>9,.0f} b/s "
            f"{ratio:>6.1f}x  >= {target:.0f}x: {'met' if met[-1] else 'MISSED'}"
        )

    times = epoch_case(epoch_repeats)
    seconds = {name: statistics.median(ts) for name, ts in times.items()}
    fast_ratio = _median_ratio(times["fast"], times["floor"])
    plain_ratio = _median_ratio(times["plain"], times["floor"])
    met.append(fast_ratio <= 1.15)
    print()
    print("one epoch on the digits (MLP 64-128-10, SGD, batch 32), forward + backward + step:")
    print(f"  compute floor (pre-made batches)   {seconds['floor'] * 1e3:8.2f} ms")
    print(
        f"  InMemoryLoader                     {seconds['fast'] * 1e3:8.2f} ms  "
        f"{fast_ratio:.3f}x the floor  (target <= 1.15x: {'met' if met[-1] else 'MISSED'})"
    )
    print(
        f"  DataLoader(TensorDataset)          {seconds['plain'] * 1e3:8.2f} ms  "
        f"{plain_ratio:.3f}x the floor  (for reference)"
    )
    print()
    print("ratios are medians of per-repeat ratios (each repeat runs the contenders back to back)")
    print(f"targets met: {sum(met)} of {len(met)} (took {time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
