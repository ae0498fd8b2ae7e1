"""Train a small CNN on the bundled digits, as one process or under torchrun: same code.

    python examples/train_digits.py                                # one process
    torchrun --standalone --nproc_per_node=2 examples/train_digits.py   # two processes (DDP)
    python examples/train_digits.py --epochs 20 --checkpoint-dir runs/digits --resume

Under torchrun, `companion.fit` joins the process group (gloo on CPU, NCCL on GPUs), wraps
the model in DistributedDataParallel, shards both loaders with a DistributedSampler, averages
the reported metrics across ranks, and prints and checkpoints on rank 0 only. The global batch
is --batch-size times the number of processes. Stop with Ctrl-C (or SIGTERM) when checkpointing:
the run saves and exits; --resume continues exactly where it stopped.
"""

from __future__ import annotations

import argparse
import os

import torch
from torch import nn
from torch.utils.data import DataLoader

import companion


def make_model(num_classes: int = 10) -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),  # (B, 16, 16, 16)
        nn.MaxPool2d(2),  # (B, 16, 8, 8)
        nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),  # (B, 32, 8, 8)
        nn.AdaptiveAvgPool2d(1), nn.Flatten(),  # (B, 32)
        nn.Dropout(0.2), nn.Linear(32, num_classes),
    )  # fmt: skip


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--epochs", type=int, default=5, help="number of epochs (default: 5)")
    parser.add_argument(
        "--batch-size", type=int, default=64, help="batch per process (default: 64)"
    )
    parser.add_argument(
        "--lr", type=float, default=1e-2, help="AdamW learning rate (default: 1e-2)"
    )
    parser.add_argument(
        "--amp", choices=["bf16", "fp16"], default=None, help="mixed precision (default: off)"
    )
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda, mps (default: auto)")
    parser.add_argument(
        "--checkpoint-dir", default=None, help="checkpoint every epoch into this folder"
    )
    parser.add_argument("--resume", action="store_true", help="continue from the newest checkpoint")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    args = parser.parse_args(argv)

    companion.seed_everything(args.seed)  # the same on every rank: same init, same shuffles
    train_ds, val_ds = companion.digits(upscale=2, seed=args.seed)  # 16x16 real digits, offline
    train_loader = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True)
    val_loader = DataLoader(val_ds, batch_size=256)
    model = make_model()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    history = companion.fit(
        model, train_loader, optimizer, nn.CrossEntropyLoss(), num_epochs=args.epochs,
        val_loader=val_loader, scheduler=scheduler, device=args.device, amp=args.amp,
        checkpoint_dir=args.checkpoint_dir, resume=args.resume,
    )  # fmt: skip
    if int(os.environ.get("RANK", "0")) == 0:
        print(history)


if __name__ == "__main__":
    main()
