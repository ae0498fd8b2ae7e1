"""Tests for companion/checkpoint.py."""

import os
import random
import signal
import subprocess
import sys
import time
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import companion
from companion import (
    CheckpointError,
    latest_checkpoint,
    load_checkpoint,
    load_unwrapped,
    save_checkpoint,
    strip_prefixes,
    unwrap_model,
)
from companion.checkpoint import checkpoint_name

HERE = Path(__file__).parent


def make_training_state(seed=0):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 2))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
    loss = model(torch.randn(6, 4)).sum()
    loss.backward()
    optimizer.step()
    scheduler.step()
    return model, optimizer, scheduler, scaler


def test_round_trip_restores_everything(tmp_path):
    model, optimizer, scheduler, scaler = make_training_state(0)
    scaler.scale(torch.ones(()))
    scaler.update(512.0)
    path = save_checkpoint(
        tmp_path / "run" / "c.pt", model=model, optimizer=optimizer, scheduler=scheduler,
        scaler=scaler, epoch=3, step=7, best_accuracy=0.9, notes={"tag": "x"},
    )  # fmt: skip
    assert path.exists() and path.parent.name == "run"
    model2, optimizer2, scheduler2, scaler2 = make_training_state(1)
    state = load_checkpoint(
        path, model=model2, optimizer=optimizer2, scheduler=scheduler2, scaler=scaler2
    )
    assert state == {"epoch": 3, "step": 7, "best_accuracy": 0.9, "notes": {"tag": "x"}}
    for key, value in model.state_dict().items():
        assert torch.equal(value, model2.state_dict()[key]), key
    s1, s2 = optimizer.state_dict(), optimizer2.state_dict()
    assert s1["param_groups"] == s2["param_groups"]
    for pid in s1["state"]:
        assert torch.equal(s1["state"][pid]["exp_avg"], s2["state"][pid]["exp_avg"])
    assert scheduler2.state_dict() == scheduler.state_dict()
    assert scaler2.get_scale() == 512.0


def test_checkpoint_is_a_plain_dict_that_loads_with_weights_only(tmp_path):
    model, optimizer, _, _ = make_training_state()
    save_checkpoint(tmp_path / "c.pt", model=model, optimizer=optimizer, epoch=1)
    raw = torch.load(tmp_path / "c.pt", weights_only=True)
    assert {"model", "optimizer", "rng", "epoch", "step", "extra"} <= set(raw)
    assert {"python", "numpy", "torch"} <= set(raw["rng"])


def test_rng_states_are_restored(tmp_path):
    model, _, _, _ = make_training_state()
    save_checkpoint(tmp_path / "c.pt", model=model)
    expected = (random.random(), np.random.rand(), torch.rand(3))
    random.seed(99), np.random.seed(99), torch.manual_seed(99)
    load_checkpoint(tmp_path / "c.pt", model=model)
    got = (random.random(), np.random.rand(), torch.rand(3))
    assert got[0] == expected[0] and got[1] == expected[1] and torch.equal(got[2], expected[2])


def test_restore_rng_false_returns_the_state_instead(tmp_path):
    model, _, _, _ = make_training_state()
    save_checkpoint(tmp_path / "c.pt", model=model)
    expected = torch.rand(2)
    torch.manual_seed(5)
    state = load_checkpoint(tmp_path / "c.pt", model=model, restore_rng=False)
    assert not torch.equal(torch.rand(2), expected)
    companion.set_rng_state(state["rng"])
    assert torch.equal(torch.rand(2), expected)


def test_a_loader_with_its_own_generator_replays_its_order(tmp_path):
    data = TensorDataset(torch.arange(20.0))
    loader = DataLoader(
        data, batch_size=5, shuffle=True, generator=torch.Generator().manual_seed(3)
    )
    model = nn.Linear(1, 1)
    list(loader)  # one epoch already done
    save_checkpoint(tmp_path / "c.pt", model=model, train_loader=loader)
    expected = [b[0].tolist() for b in loader]
    list(loader), list(loader)  # move on
    load_checkpoint(tmp_path / "c.pt", model=model, train_loader=loader)
    assert [b[0].tolist() for b in loader] == expected


def test_saved_from_the_unwrapped_model(tmp_path):
    model = nn.Sequential(nn.Linear(3, 3))
    for wrapped in (
        nn.DataParallel(model),
        torch.compile(model),
        torch.compile(nn.DataParallel(model)),
    ):
        assert unwrap_model(wrapped) is model
        save_checkpoint(tmp_path / "c.pt", model=wrapped)
        keys = list(torch.load(tmp_path / "c.pt", weights_only=True)["model"])
        assert keys == ["0.weight", "0.bias"]
        load_checkpoint(tmp_path / "c.pt", model=wrapped)  # and it loads back into a wrapper


def test_loading_accepts_wrapper_prefixes(tmp_path):
    model = nn.Sequential(nn.Linear(3, 3))
    save_checkpoint(tmp_path / "c.pt", model=model)
    raw = torch.load(tmp_path / "c.pt", weights_only=True)
    raw["model"] = OrderedDict((f"_orig_mod.module.{k}", v) for k, v in raw["model"].items())
    torch.save(raw, tmp_path / "prefixed.pt")
    other = nn.Sequential(nn.Linear(3, 3))
    load_checkpoint(tmp_path / "prefixed.pt", model=other)
    assert torch.equal(other[0].weight, model[0].weight)


def test_strip_prefixes_only_strips_leading_wrappers():
    sd = OrderedDict(
        [
            ("module.fc.weight", 1),
            ("_orig_mod.module.fc.bias", 2),
            ("encoder.module.weight", 3),
            ("head._orig_mod.x", 4),
        ]
    )
    sd._metadata = OrderedDict([("", {"version": 1}), ("module.fc", {"version": 2})])
    out = strip_prefixes(sd)
    assert list(out) == ["fc.weight", "fc.bias", "encoder.module.weight", "head._orig_mod.x"]
    assert list(out._metadata) == ["", "fc"]
    assert list(sd)[0] == "module.fc.weight"  # input untouched


class _Named(nn.Module):
    """A plain model whose submodules are really called ``module`` (and ``head``)."""

    def __init__(self, only_module: bool = False) -> None:
        super().__init__()
        self.module = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
        if not only_module:
            self.head = nn.Linear(4, 2)


@pytest.mark.parametrize("only_module", [False, True])
@pytest.mark.parametrize(
    "prefix",
    ["", "module.", "_orig_mod.", "_orig_mod.module.", "module._orig_mod.", "module.module."],
)
def test_load_unwrapped_reads_the_wrapping_from_the_file(only_module, prefix):
    torch.manual_seed(0)
    source = _Named(only_module)
    source.module[1].running_mean.fill_(0.5)
    sd = OrderedDict((prefix + k, v) for k, v in source.state_dict().items())
    keys = list(sd)
    target = _Named(only_module)
    load_unwrapped(target, sd)
    assert list(sd) == keys  # the input is not modified
    for (name, a), b in zip(target.state_dict().items(), source.state_dict().values()):
        assert torch.equal(a, b), name


def test_load_unwrapped_with_real_wrappers_and_a_wrapped_target():
    model = nn.Sequential(nn.Linear(3, 3))
    for wrapped in (
        nn.DataParallel(model),
        torch.compile(model),
        torch.compile(nn.DataParallel(model)),
    ):
        other = nn.Sequential(nn.Linear(3, 3))
        load_unwrapped(nn.DataParallel(other), wrapped.state_dict())
        assert torch.equal(other[0].weight, model[0].weight)


def test_load_unwrapped_names_the_keys_after_unwrapping_and_leaves_the_model():
    source = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
    sd = OrderedDict((f"_orig_mod.module.{k}", v) for k, v in source.state_dict().items())
    del sd["_orig_mod.module.2.bias"]
    sd["_orig_mod.module.3.weight"] = torch.zeros(1)
    target = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
    before = {k: v.clone() for k, v in target.state_dict().items()}
    with pytest.raises(
        CheckpointError, match=r"missing keys \['2.bias'\], unexpected keys \['3.weight'\]"
    ):
        load_unwrapped(target, sd)
    assert all(torch.equal(before[k], v) for k, v in target.state_dict().items())


def test_load_unwrapped_accepts_a_missing_num_batches_tracked():
    source = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    sd = {f"module.{k}": v for k, v in source.state_dict().items() if "num_batches" not in k}
    target = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    load_unwrapped(target, sd)
    assert torch.equal(target[0].weight, source[0].weight)


def test_load_unwrapped_rejects_non_mappings():
    with pytest.raises(TypeError, match="state_dict must be a mapping"):
        load_unwrapped(nn.Linear(1, 1), [1])


def test_strip_prefixes_rejects_non_mappings():
    with pytest.raises(TypeError, match="state_dict must be a mapping.*got list"):
        strip_prefixes([1, 2])


def test_values_that_would_not_load_are_refused_at_save_time(tmp_path):
    model = nn.Linear(2, 2)
    with pytest.raises(TypeError, match=r"\['extra'\]\['best'\] is a numpy.float64.*float\(\)"):
        save_checkpoint(tmp_path / "c.pt", model=model, best=np.float64(0.5))
    with pytest.raises(TypeError, match=r"\['extra'\]\['fn'\] is a builtins.function"):
        save_checkpoint(tmp_path / "c.pt", model=model, fn=lambda: 0)
    with pytest.raises(ValueError, match="epoch must be None or a non-negative int, got -1"):
        save_checkpoint(tmp_path / "c.pt", model=model, epoch=-1)
    with pytest.raises(TypeError, match="model must be an nn.Module, got dict"):
        save_checkpoint(tmp_path / "c.pt", model={})
    assert not (tmp_path / "c.pt").exists()


def test_missing_file_and_folder_are_named(tmp_path):
    with pytest.raises(CheckpointError, match=r"no checkpoint file at .*nope\.pt"):
        load_checkpoint(tmp_path / "nope.pt", model=nn.Linear(1, 1))
    with pytest.raises(CheckpointError, match="is a folder"):
        load_checkpoint(tmp_path, model=nn.Linear(1, 1))


def test_truncated_corrupted_and_foreign_files_are_named(tmp_path):
    model = nn.Linear(50, 50)
    good = save_checkpoint(tmp_path / "good.pt", model=model)
    data = good.read_bytes()
    (tmp_path / "truncated.pt").write_bytes(data[: len(data) // 2])
    (tmp_path / "empty.pt").write_bytes(b"")
    (tmp_path / "text.pt").write_text("not a checkpoint at all")
    torch.save(model.state_dict(), tmp_path / "bare.pt")
    torch.save([1, 2, 3], tmp_path / "list.pt")
    for name, match in [
        ("truncated.pt", "truncated, corrupted"),
        ("empty.pt", "truncated, corrupted"),
        ("text.pt", "truncated, corrupted"),
        ("bare.pt", "not a companion checkpoint.*bare state_dict"),
        ("list.pt", "not a companion checkpoint.*found list"),
    ]:
        with pytest.raises(CheckpointError, match=match) as info:
            load_checkpoint(tmp_path / name, model=model)
        assert name in str(info.value)


def test_a_malicious_pickle_is_refused_without_running(tmp_path):
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    torch.save({"format": "companion.checkpoint", "model": Evil()}, tmp_path / "evil.pt")
    with pytest.raises(
        CheckpointError, match=r"refused to load .*evil\.pt.*posix.system.*not run|refused"
    ):
        load_checkpoint(tmp_path / "evil.pt", model=nn.Linear(1, 1))
    assert not marker.exists()


def test_what_does_not_fit_is_named(tmp_path):
    save_checkpoint(tmp_path / "c.pt", model=nn.Linear(2, 2))
    with pytest.raises(CheckpointError, match="(?s)does not fit this model.*size mismatch"):
        load_checkpoint(tmp_path / "c.pt", model=nn.Linear(3, 3))
    model = nn.Linear(2, 2)
    with pytest.raises(CheckpointError, match="holds no optimizer state"):
        load_checkpoint(
            tmp_path / "c.pt", model=model, optimizer=torch.optim.SGD(model.parameters(), lr=1)
        )


def test_a_child_called_module_keeps_its_name_through_a_checkpoint(tmp_path):
    class Holder(nn.Module):  # every key starts with "module.", and nothing was wrapped
        def __init__(self):
            super().__init__()
            self.module = nn.Linear(2, 2)

    torch.manual_seed(0)
    saved = Holder()
    save_checkpoint(tmp_path / "plain.pt", model=saved)
    save_checkpoint(tmp_path / "wrapped.pt", model=nn.DataParallel(saved))
    for name in ("plain.pt", "wrapped.pt"):
        fresh = Holder()
        load_checkpoint(tmp_path / name, model=fresh)
        assert torch.equal(fresh.module.weight, saved.module.weight), name


def test_a_crash_during_save_keeps_the_previous_file(tmp_path, monkeypatch):
    model = nn.Linear(4, 4)
    path = save_checkpoint(tmp_path / "c.pt", model=model, epoch=1)

    def broken_save(obj, f):
        f.write(b"half a file")
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", broken_save)
    with pytest.raises(CheckpointError, match="disk full.*the previous c.pt is unchanged"):
        save_checkpoint(path, model=model, epoch=2)
    monkeypatch.undo()
    assert load_checkpoint(path, model=model)["epoch"] == 1
    assert os.listdir(tmp_path) == ["c.pt"]  # no temporary file left behind


def test_sigkill_at_any_moment_leaves_a_loadable_checkpoint(tmp_path):
    rng = random.Random(0)
    for round_ in range(6):
        proc = subprocess.Popen(
            [sys.executable, str(HERE / "_crash_writer.py"), str(tmp_path)], stdout=subprocess.PIPE
        )
        assert proc.stdout.readline().strip() == b"ready"
        deadline = time.monotonic() + 30
        while latest_checkpoint(tmp_path) is None and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(rng.uniform(0.05, 0.4))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 64))
        state = load_checkpoint(tmp_path / "last.pt", model=model)
        assert state["step"] >= 1, round_
        newest = latest_checkpoint(tmp_path)
        assert newest is not None and not newest.name.endswith(".tmp")
        load_checkpoint(newest, model=model)


def test_latest_checkpoint_orders_by_progress_and_skips_incomplete_files(tmp_path):
    assert latest_checkpoint(tmp_path) is None
    assert latest_checkpoint(tmp_path / "missing") is None
    model = nn.Linear(1, 1)
    for epoch, step in [(1, 10), (2, 20), (10, 100)]:
        save_checkpoint(tmp_path / checkpoint_name(epoch, step), model=model, epoch=epoch)
    (tmp_path / f".{checkpoint_name(11, 110)}.abc.tmp").write_bytes(b"partial")
    (tmp_path / checkpoint_name(12, 120)).write_bytes(b"copied halfway")
    assert latest_checkpoint(tmp_path).name == checkpoint_name(10, 100)
    with pytest.raises(NotADirectoryError):
        latest_checkpoint(tmp_path / checkpoint_name(1, 10))


def test_latest_checkpoint_falls_back_to_the_newest_pt_file(tmp_path):
    model = nn.Linear(1, 1)
    save_checkpoint(tmp_path / "b.pt", model=model)
    save_checkpoint(tmp_path / "a.pth", model=model)
    os.utime(tmp_path / "b.pt", (1, 1))
    assert latest_checkpoint(tmp_path).name == "a.pth"


# ----------------------------------------------------------------------------- the user's mistakes

_FULL_DISK = """
import resource, signal, sys
import torch
from torch import nn
from companion import CheckpointError, load_checkpoint, save_checkpoint

path = sys.argv[1]
small = nn.Linear(2, 2)
save_checkpoint(path, model=small, epoch=1)
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails, like a full disk
resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))
try:
    save_checkpoint(path, model=nn.Linear(200, 200), epoch=2)
except CheckpointError as err:
    print("ERROR", err)
print("EPOCH", load_checkpoint(path, model=small)["epoch"])
"""


def test_a_full_disk_during_save_says_so_and_keeps_the_previous_file(tmp_path):
    out = subprocess.run(
        [sys.executable, "-c", _FULL_DISK, str(tmp_path / "last.pt")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "ERROR could not write" in out.stdout and "free on that disk" in out.stdout
    assert "the previous last.pt is unchanged" in out.stdout
    assert "inline_container" not in out.stdout.split("free on")[1]
    assert "EPOCH 1" in out.stdout
    assert sorted(os.listdir(tmp_path)) == ["last.pt"]


def test_saving_into_a_file_or_a_read_only_folder_names_the_folder(tmp_path):
    blocker = tmp_path / "runs"
    blocker.write_text("a file where the folder should be")
    with pytest.raises(CheckpointError, match="cannot write a checkpoint in .*runs"):
        save_checkpoint(blocker / "last.pt", model=nn.Linear(2, 2))


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_map_location_cuda_without_cuda_does_not_call_a_good_file_corrupted(tmp_path):
    path = save_checkpoint(tmp_path / "c.pt", model=nn.Linear(2, 2), epoch=3)
    with pytest.raises(ValueError, match="no CUDA device.*map_location='cpu'.*file itself is fine"):
        load_checkpoint(path, model=nn.Linear(2, 2), map_location="cuda")
    with pytest.raises(ValueError, match="map_location must be a device"):
        load_checkpoint(path, model=nn.Linear(2, 2), map_location="gpu")
    assert load_checkpoint(path, model=nn.Linear(2, 2))["epoch"] == 3  # still loads on the CPU


def test_resuming_with_another_optimizer_type_names_both(tmp_path):
    model = nn.Linear(2, 2)
    sgd = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(torch.ones(1, 2)).sum().backward()
    sgd.step()
    path = save_checkpoint(tmp_path / "c.pt", model=model, optimizer=sgd, epoch=1)
    adam = torch.optim.Adam(model.parameters())
    with pytest.raises(CheckpointError, match="state of a SGD optimizer, but an Adam was passed"):
        load_checkpoint(path, model=model, optimizer=adam)
    assert load_checkpoint(path, model=model, optimizer=sgd)["epoch"] == 1
