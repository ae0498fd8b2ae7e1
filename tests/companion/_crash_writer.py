"""Saves checkpoints in a tight loop until killed: used by the SIGKILL fault test.

python _crash_writer.py FOLDER
"""

import sys
from pathlib import Path

import torch
from torch import nn

import companion

folder = Path(sys.argv[1])
model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 64))  # ~130 KB of weights
optimizer = torch.optim.Adam(model.parameters())
step = 0
print("ready", flush=True)
while True:
    step += 1
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.01)
    # one file rewritten in place, and a rotating series as fit writes it
    companion.save_checkpoint(folder / "last.pt", model=model, optimizer=optimizer, step=step)
    companion.save_checkpoint(
        folder / companion.checkpoint.checkpoint_name(0, step), model=model, step=step
    )
    for old in companion.checkpoint.list_checkpoints(folder)[:-2]:
        old.unlink(missing_ok=True)
