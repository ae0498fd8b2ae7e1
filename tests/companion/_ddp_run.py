"""A fit run for the torchrun tests: the same script as one process or under torchrun.

    python _ddp_run.py OUT_DIR CKPT_DIR MODE NUM_EPOCHS
    torchrun --nproc_per_node=2 _ddp_run.py OUT_DIR CKPT_DIR MODE NUM_EPOCHS

MODE: "plain" (no checkpoints), "checkpoint" (checkpoint every epoch), "resume", "callbacks"
(no checkpoints; rank 1 alone asks to stop after epoch 2, and a BestCheckpoint goes to CKPT_DIR/
best.pt). Each rank
writes its final parameters and history to OUT_DIR/rank{RANK}.pt. The global batch is 16:
8 per rank with 2 ranks, 16 in one process.
"""

import os
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

import companion


class StopOnRankOne:
    """Asks to stop after epoch 2 on rank 1 only: fit must stop every rank there."""

    def on_epoch_end(self, record, state):
        return int(os.environ.get("RANK", "0")) == 1 and record["epoch"] == 2


def main(out_dir, ckpt_dir, mode, num_epochs):
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    companion.seed_everything(0)
    inputs = torch.randn(96, 8)
    targets = (inputs[:, :3].sum(dim=1) > 0).long()
    dataset = TensorDataset(inputs, targets)
    if world_size > 1:  # fit shards this loader itself
        train_loader = DataLoader(dataset, batch_size=16 // world_size, shuffle=True)
    else:  # one process, the same order as the sharded run: one replica of the same sampler
        sampler = DistributedSampler(dataset, num_replicas=1, rank=0, shuffle=True, seed=0)
        train_loader = DataLoader(dataset, batch_size=16, sampler=sampler)
    val_loader = DataLoader(TensorDataset(inputs[:32], targets[:32]), batch_size=8)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    callbacks = None
    if mode == "callbacks":
        best = os.path.join(ckpt_dir, "best.pt")
        callbacks = [StopOnRankOne(), companion.BestCheckpoint(best, monitor="val_loss")]
    history = companion.fit(
        model, train_loader, optimizer, nn.CrossEntropyLoss(), num_epochs=num_epochs,
        val_loader=val_loader, device="cpu", progress=True,
        checkpoint_dir=None if mode in ("plain", "callbacks") else ckpt_dir,
        resume=mode == "resume", callbacks=callbacks,
    )  # fmt: skip
    rank = int(os.environ.get("RANK", "0"))
    torch.save(
        {
            "model": model.state_dict(),
            "train_loss": history.train_loss,
            "val_loss": history.val_loss,
            "stopped_early": history.stopped_early,
        },
        os.path.join(out_dir, f"rank{rank}.pt"),
    )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
