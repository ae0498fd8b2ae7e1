"""Run a script under torchrun for the tests, and say what happened when it does not finish.

``subprocess.run(..., timeout=)`` kills only torchrun itself on a timeout: its rank processes
lived on, and the test failed without their output. Here the whole process group is killed and the
failure shows the tail of what the ranks printed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest


def torchrun(script, *args, nproc: int = 2, timeout: float = 240) -> subprocess.CompletedProcess:
    """``python -m torch.distributed.run --standalone --nproc_per_node=N script args``.

    Fails the test with the ranks' output when the run exits non-zero or outlives ``timeout``.
    """
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone",
               f"--nproc_per_node={nproc}", str(script), *map(str, args)]  # fmt: skip
    return run_logged(command, timeout)


def run_logged(command: list[str], timeout: float) -> subprocess.CompletedProcess:
    """Run ``command`` in a process group of its own; fail with its output if it fails."""
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        pytest.fail(
            f"{' '.join(command[1:])} still ran after {timeout:.0f} s (killed).\n"
            f"stdout:\n{stdout[-2000:]}\nstderr:\n{stderr[-4000:]}"
        )
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(command[1:])} exited {proc.returncode}:\n{stderr[-4000:]}")
    return subprocess.CompletedProcess(command, proc.returncode, stdout, stderr)
