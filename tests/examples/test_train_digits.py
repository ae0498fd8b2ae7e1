"""The example script runs as documented (one process; torchrun is covered by test_distributed)."""

import runpy
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "train_digits.py"


def test_example_trains_checkpoints_and_resumes(tmp_path, monkeypatch, capsys):
    args = [
        "--epochs",
        "1",
        "--batch-size",
        "256",
        "--device",
        "cpu",
        "--checkpoint-dir",
        str(tmp_path),
    ]
    monkeypatch.setattr(sys, "argv", [str(EXAMPLE), *args])
    runpy.run_path(str(EXAMPLE), run_name="__main__")
    assert "val_accuracy" in capsys.readouterr().out
    monkeypatch.setattr(
        sys, "argv", [str(EXAMPLE), *args[:-2], "--checkpoint-dir", str(tmp_path), "--resume"]
    )
    runpy.run_path(str(EXAMPLE), run_name="__main__")  # already done: resumes to the end at once
    assert len(list(tmp_path.glob("ckpt-*.pt"))) == 1
