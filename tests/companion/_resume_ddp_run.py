"""A fit run under torchrun for the mid-epoch resume test: 2 ranks, 2 workers each.

    torchrun --nproc_per_node=2 _resume_ddp_run.py OUT_DIR CKPT_DIR MODE [STOP_AT]

MODE: "full" (2 epochs, no checkpoints), "stop" (rank 0 sends itself SIGTERM at its loss call
STOP_AT; every rank stops after that step and a mid-epoch checkpoint is written) or "resume".
The dataset adds random noise inside the workers and writes every index it loads to
OUT_DIR/rank{RANK}.log; each rank saves what it saw to OUT_DIR/rank{RANK}.pt.
"""

import os
import signal
import sys

import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, Dataset

import companion


class Recorded(Dataset):
    def __init__(self, log):
        generator = torch.Generator().manual_seed(0)
        self.inputs = torch.randn(64, 6, generator=generator)
        self.targets = torch.randint(0, 3, (64,), generator=generator)
        self.log = log

    def __len__(self):
        return 64

    def __getitem__(self, i):
        with open(self.log, "a") as f:
            f.write(f"{i}\n")
        return (self.inputs[i] + 0.1 * torch.rand(6), torch.tensor(i)), self.targets[i]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 3)
        self.seen = []

    def forward(self, x, index):
        self.seen.append((index.clone(), x.detach().clone()))
        return self.fc(x)


def main(out_dir, ckpt_dir, mode, stop_at=0):
    rank = int(os.environ.get("RANK", "0"))
    companion.seed_everything(0)
    dataset = Recorded(os.path.join(out_dir, f"rank{rank}.log"))
    train_loader = DataLoader(dataset, batch_size=4, shuffle=True, num_workers=2,
                              multiprocessing_context="fork")  # fmt: skip
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    calls = [0]

    def loss_fn(outputs, targets):
        calls[0] += 1
        if mode == "stop" and rank == 0 and calls[0] == stop_at:
            os.kill(os.getpid(), signal.SIGTERM)
        return F.cross_entropy(outputs, targets)

    history = companion.fit(model, train_loader, optimizer, loss_fn, num_epochs=2, device="cpu",
                            checkpoint_dir=None if mode == "full" else ckpt_dir,
                            resume=mode == "resume", progress=False)  # fmt: skip
    torch.save(
        {
            "seen": model.seen,
            "state": model.state_dict(),
            "loss": history.train_loss,
            "interrupted": history.interrupted,
            "batches": len(train_loader) // 2,  # the unsharded loader's length over 2 ranks
        },
        os.path.join(out_dir, f"rank{rank}.pt"),
    )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 0)
