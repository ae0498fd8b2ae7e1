"""A training run used by the exact-resume tests, run in its own process.

    python _resume_run.py OUT_FILE CHECKPOINT_DIR MODE [STOP_AT [callbacks]]

MODE is "full" (no checkpoints), "epochs" (stop after STOP_AT epochs), "signal" (SIGTERM to
itself at batch STOP_AT of the run: the signal handler saves a mid-epoch checkpoint), or
"resume" (continue from the newest checkpoint to the end). With "callbacks", the run has an
EarlyStopping (restoring the best weights) and a BestCheckpoint writing CHECKPOINT_DIR/../best.pt,
and trains for up to 12 epochs.
"""

import os
import signal
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import companion

NUM_EPOCHS = 4


def main(out, ckpt_dir, mode, stop_at=0, with_callbacks=False):
    companion.seed_everything(0)
    inputs = torch.randn(120, 8)
    targets = (inputs[:, :2].sum(dim=1) > 0).long()
    train_loader = DataLoader(TensorDataset(inputs, targets), batch_size=16, shuffle=True)
    val_loader = DataLoader(TensorDataset(inputs[:40], targets[:40]), batch_size=20)
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Dropout(0.25), nn.Linear(32, 2))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
    calls = [0]
    cross_entropy = nn.CrossEntropyLoss()

    def loss_fn(outputs, targets):
        calls[0] += 1
        if mode == "signal" and calls[0] == stop_at:
            os.kill(os.getpid(), signal.SIGTERM)  # as a scheduler or `kill` would
        return cross_entropy(outputs, targets)

    callbacks, num_epochs = [], NUM_EPOCHS
    if with_callbacks:
        num_epochs = 12
        best = os.path.join(os.path.dirname(os.path.abspath(ckpt_dir)), "best.pt")
        callbacks = [
            companion.EarlyStopping(
                "val_loss", patience=2, min_delta=0.01, restore_best_weights=True
            ),
            companion.BestCheckpoint(best, monitor="val_accuracy", mode="max"),
        ]
    torch.manual_seed(1234 if mode == "resume" else 0)  # a resumed run must not depend on this
    history = companion.fit(
        model,
        train_loader,
        optimizer,
        loss_fn,
        num_epochs=stop_at if mode == "epochs" else num_epochs,
        val_loader=val_loader,
        scheduler=scheduler,
        device="cpu",
        accumulate=2,
        checkpoint_dir=None if mode == "full" else ckpt_dir,
        checkpoint_every=None if mode == "full" else 5,
        resume=mode == "resume",
        progress=False,
        callbacks=callbacks,
    )
    torch.save(
        {
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "train_loss": history.train_loss,
            "val_loss": history.val_loss,
            "interrupted": history.interrupted,
            "stopped_early": history.stopped_early,
            "callbacks": [{"best": cb.best, "best_epoch": cb.best_epoch} for cb in callbacks],
        },
        out,
    )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 0,
         sys.argv[5:] == ["callbacks"])  # fmt: skip
