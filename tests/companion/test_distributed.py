"""fit under torchrun (2 CPU processes, gloo) against the same run in one process."""

import sys
from pathlib import Path

import pytest
import torch
from torch.testing import assert_close

from companion.distributed import DistContext

from ._torchrun import run_logged, torchrun

SCRIPT = Path(__file__).with_name("_ddp_run.py")


def run(out_dir, ckpt_dir, mode, num_epochs, nproc):
    out_dir.mkdir(parents=True, exist_ok=True)
    args = [out_dir, ckpt_dir, mode, num_epochs]
    if nproc > 1:
        done = torchrun(SCRIPT, *args, nproc=nproc, timeout=240)
    else:
        done = run_logged([sys.executable, str(SCRIPT), *map(str, args)], timeout=240)
    return [torch.load(out_dir / f"rank{r}.pt", weights_only=True) for r in range(nproc)], done


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ddp")
    ddp, ddp_proc = run(tmp / "ddp", tmp / "unused", "plain", 4, nproc=2)
    single, single_proc = run(tmp / "single", tmp / "unused", "plain", 4, nproc=1)
    return tmp, ddp, single, (ddp_proc, single_proc)


def test_ranks_end_with_identical_parameters(runs):
    _, (rank0, rank1), _, _ = runs
    for key in rank0["model"]:
        assert torch.equal(rank0["model"][key], rank1["model"][key]), key
    assert rank0["train_loss"] == rank1["train_loss"]  # averaged across ranks, on both


def test_two_ranks_match_one_process_with_the_same_global_batch(runs):
    _, (rank0, _), (single,), _ = runs
    for key in single["model"]:
        assert_close(rank0["model"][key], single["model"][key], rtol=1e-5, atol=1e-6)
    assert rank0["train_loss"] == pytest.approx(single["train_loss"], rel=1e-5)
    assert rank0["val_loss"] == pytest.approx(single["val_loss"], rel=1e-5)


def test_only_rank_zero_shows_the_progress_bar(runs):
    *_, (ddp_proc, single_proc) = runs
    final = "val_accuracy="  # in the postfix of each epoch's finished bar
    assert ddp_proc.stderr.count(final) >= 4
    assert ddp_proc.stderr.count(final) == single_proc.stderr.count(final)


def test_resume_across_torchrun_and_one_process(runs):
    tmp, (ddp_full, _), (single_full,), _ = runs
    ckpt = tmp / "ckpt"
    run(tmp / "first", ckpt, "checkpoint", 2, nproc=2)  # 2 epochs under torchrun
    names = sorted(p.name for p in ckpt.iterdir())
    assert names == ["ckpt-e0001-s000000006.pt", "ckpt-e0002-s000000012.pt"]  # rank 0 only
    keys = torch.load(ckpt / names[-1], weights_only=True)["model"].keys()
    assert not any(k.startswith("module.") for k in keys)  # the unwrapped model
    (resumed, _), _ = run(tmp / "resumed", ckpt, "resume", 4, nproc=2)
    for key in ddp_full["model"]:
        assert torch.equal(resumed["model"][key], ddp_full["model"][key]), key
    assert resumed["train_loss"] == ddp_full["train_loss"]
    # the torchrun checkpoint resumes in one process too (and lands where one process would)
    ckpt_single = tmp / "ckpt_single"
    ckpt_single.mkdir()
    (ckpt_single / names[-1]).write_bytes((ckpt / names[-1]).read_bytes())
    (alone,), _ = run(tmp / "alone", ckpt_single, "resume", 4, nproc=1)
    for key in single_full["model"]:
        assert_close(alone["model"][key], single_full["model"][key], rtol=1e-5, atol=1e-6)


def test_a_single_process_context_is_a_no_op():
    ctx = DistContext()
    model = torch.nn.Linear(2, 2)
    assert ctx.wrap(model, torch.device("cpu")) is model
    assert ctx.shard([1, 2]) == [1, 2]
    assert ctx.mean({"loss": 1.5}) == {"loss": 1.5} and ctx.any(True) and ctx.is_main


def test_a_callback_stop_on_one_rank_stops_every_rank(tmp_path):
    # Rank 1 alone asks to stop after epoch 2 of 4; without agreement rank 0 would train on and
    # wait forever in its next collective. Only rank 0 writes the BestCheckpoint file.
    ranks, _ = run(tmp_path / "out", tmp_path / "ckpt", "callbacks", 4, nproc=2)
    assert [len(r["train_loss"]) for r in ranks] == [2, 2]
    assert all(r["stopped_early"] for r in ranks)
    best = torch.load(tmp_path / "ckpt" / "best.pt", weights_only=True)
    assert set(best["model"]) == set(ranks[0]["model"])
    assert sorted(p.name for p in (tmp_path / "ckpt").iterdir()) == ["best.pt"]


CLOSE_SCRIPT = """
import torch, torch.distributed as dist
from companion.distributed import DistContext
dist.init_process_group("gloo", init_method="tcp://127.0.0.1:0", rank=0, world_size=1)
ctx = DistContext(rank=0, world_size=2, created_group=True)  # as fit sees a torchrun rank
ddp = ctx.wrap(torch.nn.Linear(2, 2), torch.device("cpu"))
ddp(torch.randn(3, 2)).sum().backward()  # one allreduce through the reducer
ctx.close()
assert "reducer" not in ddp.__dict__ and "logger" not in ddp.__dict__, "DDP still holds the group"
assert not dist.is_initialized()
print("closed")
"""


def test_close_frees_the_reducer_before_the_group():
    # Freed after destroy_process_group, DDP's reducer dropped gloo's last reference with the GIL
    # held, and torch 2.13 then hung at the end of a 2-rank run (see DistContext.close).
    done = run_logged([sys.executable, "-c", CLOSE_SCRIPT], timeout=120)
    assert done.stdout.strip() == "closed"
