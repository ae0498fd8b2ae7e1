"""Tests for companion/callbacks.py: the protocol, EarlyStopping and BestCheckpoint in fit."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import companion
from companion import BestCheckpoint, EarlyStopping, fit

HERE = Path(__file__).parent


def make_run(seed=0):
    g = torch.Generator().manual_seed(seed)
    inputs = torch.randn(64, 6, generator=g)
    targets = (inputs[:, 0] > 0).long()
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2))
    train = DataLoader(TensorDataset(inputs, targets), batch_size=16)
    val = DataLoader(TensorDataset(inputs[:32], targets[:32]), batch_size=16)
    return model, train, val


class Scripted:
    """A callback that reports a scripted validation loss instead of the measured one."""

    def __init__(self, values):
        self.values, self.seen = list(values), []

    def on_epoch_end(self, record, state):
        record["val_loss"] = self.values[state.epoch - 1]
        self.seen.append((state.epoch, len(state.history)))


def test_a_callback_sees_every_epoch_and_can_stop_the_run():
    class StopAfter:
        def __init__(self, n):
            self.n, self.epochs = n, []

        def on_epoch_end(self, record, state):
            self.epochs.append(record["epoch"])
            assert state.history.records[-1] is not None and state.epoch == record["epoch"]
            return state.epoch == self.n

    model, train, val = make_run()
    stopper = StopAfter(3)
    history = fit(model, train, torch.optim.SGD(model.parameters(), lr=0.1),
                  nn.CrossEntropyLoss(), num_epochs=10, device="cpu", progress=False,
                  callbacks=[stopper])  # fmt: skip
    assert stopper.epochs == [1, 2, 3] and len(history) == 3
    assert history.stopped_early and not history.interrupted


def test_early_stopping_waits_patience_epochs_after_the_best():
    model, train, val = make_run()
    losses = [1.0, 0.8, 0.81, 0.79, 0.9, 0.95, 0.7, 0.6]
    stopper = EarlyStopping("val_loss", patience=2, min_delta=0.05)
    history = fit(model, train, torch.optim.SGD(model.parameters(), lr=0.1),
                  nn.CrossEntropyLoss(), num_epochs=8, val_loader=val, device="cpu",
                  progress=False, callbacks=[Scripted(losses), stopper])  # fmt: skip
    # 0.79 is not 0.05 better than 0.8: epochs 3 and 4 count as no improvement
    assert stopper.best_epoch == 2 and stopper.best == 0.8
    assert stopper.stopped_epoch == 4 and len(history) == 4 and history.stopped_early


def test_early_stopping_mode_max_and_restore_best_weights():
    model, train, val = make_run()
    snapshots = []

    class Snapshot:
        def on_epoch_end(self, record, state):
            snapshots.append({k: v.clone() for k, v in state.model.state_dict().items()})

    accuracy = [0.5, 0.9, 0.7, 0.6]

    class Accuracy:
        def on_epoch_end(self, record, state):
            record["val_accuracy"] = accuracy[state.epoch - 1]

    stopper = EarlyStopping("val_accuracy", patience=2, mode="max", restore_best_weights=True)
    fit(model, train, torch.optim.SGD(model.parameters(), lr=0.5), nn.CrossEntropyLoss(),
        num_epochs=6, val_loader=val, device="cpu", progress=False,
        callbacks=[Snapshot(), Accuracy(), stopper])  # fmt: skip
    assert stopper.stopped_epoch == 4 and stopper.best_epoch == 2
    for key, value in model.state_dict().items():
        assert torch.equal(value, snapshots[1][key]), key  # epoch 2's weights, not epoch 4's
    assert not torch.equal(snapshots[1]["0.weight"], snapshots[3]["0.weight"])


def test_best_checkpoint_keeps_the_best_epoch_atomically(tmp_path):
    model, train, val = make_run()
    losses = [0.9, 0.5, 0.7, 0.4, 0.6]
    weights = {}

    class Keep:
        def on_epoch_end(self, record, state):
            weights[state.epoch] = {k: v.clone() for k, v in state.model.state_dict().items()}

    best = BestCheckpoint(tmp_path / "best.pt", monitor="val_loss")
    fit(model, train, torch.optim.SGD(model.parameters(), lr=0.1), nn.CrossEntropyLoss(),
        num_epochs=5, val_loader=val, device="cpu", progress=False,
        callbacks=[Scripted(losses), Keep(), best])  # fmt: skip
    fresh = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2))
    state = companion.load_checkpoint(best.path, model=fresh)
    assert state["epoch"] == 4 and state["value"] == 0.4 and best.best_epoch == 4
    for key, value in fresh.state_dict().items():
        assert torch.equal(value, weights[4][key]), key
    assert sorted(p.name for p in tmp_path.iterdir()) == ["best.pt"]  # no temporary left


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: EarlyStopping("val_loss", patience=0), "patience must be an int >= 1"),
        (lambda: EarlyStopping("val_loss", mode="lowest"), "mode must be 'min'.*got 'lowest'"),
        (lambda: EarlyStopping("val_loss", min_delta=-1), "min_delta must be a number >= 0"),
        (lambda: EarlyStopping(monitor=3), "monitor must be a History column"),
        (lambda: BestCheckpoint(42), "path must be a file path"),
    ],
)
def test_bad_callback_arguments_are_named(make, match):
    with pytest.raises((TypeError, ValueError), match=match):
        make()


def test_best_checkpoint_refuses_a_folder(tmp_path):
    with pytest.raises(IsADirectoryError, match="is a folder"):
        BestCheckpoint(tmp_path)


@pytest.mark.parametrize(
    ("callbacks", "val", "match"),
    [
        ([EarlyStopping], True, "pass an instance"),
        ([object()], True, "without an on_epoch_end"),
        (EarlyStopping(), True, "callbacks must be a list"),
        ([EarlyStopping("val_loss")], False, "fit has no val_loader"),
    ],
)
def test_fit_checks_callbacks_before_training(callbacks, val, match):
    model, train, val_loader = make_run()
    with pytest.raises((TypeError, ValueError), match=match):
        fit(model, train, torch.optim.SGD(model.parameters(), lr=0.1), nn.CrossEntropyLoss(),
            num_epochs=1, device="cpu", val_loader=val_loader if val else None,
            progress=False, callbacks=callbacks)  # fmt: skip


class CountBatches:
    """A loader that counts the batches drawn from it."""

    def __init__(self, loader):
        self.loader, self.drawn = loader, 0

    def __iter__(self):
        for batch in self.loader:
            self.drawn += 1
            yield batch

    def __len__(self):
        return len(self.loader)


@pytest.mark.parametrize("make", [EarlyStopping, lambda m: BestCheckpoint("best.pt", m, "min")])
def test_a_monitor_the_run_will_not_produce_is_refused_before_training(make, tmp_path):
    model, train, val = make_run()
    train = CountBatches(train)
    before = [p.clone() for p in model.parameters()]
    with pytest.raises(ValueError, match=r"monitor='val_f1' is not a column.*'val_accuracy'"):
        fit(model, train, torch.optim.SGD(model.parameters(), lr=0.1), nn.CrossEntropyLoss(),
            num_epochs=1, device="cpu", val_loader=val, progress=False,
            callbacks=[make("val_f1")])  # fmt: skip
    assert train.drawn == 0  # refused before the first batch
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))


@pytest.mark.parametrize("make", [EarlyStopping, lambda m: BestCheckpoint("best.pt", m)])
def test_accuracy_without_class_scores_is_refused_before_training(make, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    g = torch.Generator().manual_seed(0)
    inputs = torch.randn(64, 6, generator=g)
    targets = inputs[:, :1].clone()  # regression: float targets, one output per sample
    model = nn.Linear(6, 1)
    train = CountBatches(DataLoader(TensorDataset(inputs, targets), batch_size=16))
    val = DataLoader(TensorDataset(inputs[:32], targets[:32]), batch_size=16)
    before = [p.clone() for p in model.parameters()]
    with pytest.raises(
        ValueError, match=r"monitor='val_accuracy' is not a column(?s:.*)class scores"
    ):
        fit(model, train, torch.optim.SGD(model.parameters(), lr=0.1), nn.MSELoss(),
            num_epochs=1, device="cpu", val_loader=val, progress=False,
            callbacks=[make("val_accuracy")])  # fmt: skip
    assert train.drawn == 0  # refused before the first training batch
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
    assert model.training  # the look at one validation batch left the mode as it was


@pytest.mark.parametrize("with_val", [True, False])
def test_looking_for_class_scores_leaves_the_run_as_it_was(with_val):
    """The look at one batch (validation, else training) draws nothing the run would draw."""

    def run(monitor):
        model, _, val = make_run()
        g = torch.Generator().manual_seed(1)
        inputs = torch.randn(64, 6, generator=g)
        train = DataLoader(TensorDataset(inputs, (inputs[:, 0] > 0).long()), batch_size=16,
                           shuffle=True)  # fmt: skip
        model.insert(1, nn.Dropout(0.3))  # the global generator matters to training too
        torch.manual_seed(5)
        history = fit(model, train, torch.optim.SGD(model.parameters(), lr=0.1),
                      nn.CrossEntropyLoss(), num_epochs=2, device="cpu", progress=False,
                      val_loader=val if with_val else None, eval_train=not with_val,
                      callbacks=[EarlyStopping(monitor, patience=5)])  # fmt: skip
        return history.train_loss, [p.detach().clone() for p in model.parameters()]

    watched = "val_accuracy" if with_val else "train_accuracy"
    looked_losses, looked_weights = run(watched)
    plain_losses, plain_weights = run("train_loss")  # nothing to look at
    assert looked_losses == plain_losses
    assert all(torch.equal(a, b) for a, b in zip(looked_weights, plain_weights))


def test_the_planned_columns_are_the_columns_the_records_get():
    model, train, val = make_run()
    seen = {}

    class Columns:
        def on_fit_start(self, state):
            seen["planned"] = list(state.columns)
            state.columns.append("val_custom")  # what this callback adds to each record

        def on_epoch_end(self, record, state):
            record["val_custom"] = -state.epoch
            seen["record"] = list(record)

    optimizer = torch.optim.SGD([{"params": model[0].parameters()},
                                 {"params": model[2].parameters(), "lr": 0.01}], lr=0.1)  # fmt: skip
    stopper = EarlyStopping("val_custom", patience=1, mode="max")
    fit(model, train, optimizer, nn.CrossEntropyLoss(), num_epochs=2, device="cpu",
        val_loader=val, progress=False, eval_train=True, metrics={"f1": companion.F1Score(2)},
        callbacks=[Columns(), stopper])  # fmt: skip
    assert seen["planned"] == [*seen["record"][:-1], "skipped_steps"]
    assert seen["record"][-1] == "val_custom" and "val_f1" in seen["record"]
    assert stopper.stopped_epoch == 2  # -2 is not better than -1: the added column is watched


@pytest.mark.parametrize(
    ("monitor", "mode"),
    [
        ("val_accuracy", "max"),
        ("train_accuracy", "max"),
        ("val_f1", "max"),
        ("val_macro_f1", "max"),
        ("val_auc", "max"),
        ("val_loss", "min"),
        ("train_eval_loss", "min"),
        ("val_error", "min"),
        ("val_mae", "min"),
    ],  # fmt: skip
)
def test_the_mode_is_inferred_from_well_known_names(monitor, mode):
    assert EarlyStopping(monitor).mode == mode
    assert BestCheckpoint("best.pt", monitor).mode == mode
    assert EarlyStopping(monitor, mode="min").mode == "min"  # an explicit mode is kept


@pytest.mark.parametrize("monitor", ["lr", "val_score", "val_loss_minus_accuracy"])
def test_a_name_that_says_no_direction_asks_for_the_mode(monitor):
    for make in (lambda: EarlyStopping(monitor), lambda: BestCheckpoint("b.pt", monitor)):
        with pytest.raises(ValueError, match=rf"monitor='{monitor}'.*mode='min'.*mode='max'"):
            make()


def test_early_stopping_on_accuracy_by_default_stops_when_accuracy_stops_rising():
    model, train, val = make_run()
    accuracy = [0.5, 0.6, 0.7, 0.8, 0.9, 0.95]

    class Accuracy:
        def on_epoch_end(self, record, state):
            record["val_accuracy"] = accuracy[state.epoch - 1]

    stopper = EarlyStopping("val_accuracy", patience=2)
    history = fit(model, train, torch.optim.SGD(model.parameters(), lr=0.1),
                  nn.CrossEntropyLoss(), num_epochs=6, val_loader=val, device="cpu",
                  progress=False, callbacks=[Accuracy(), stopper])  # fmt: skip
    assert not history.stopped_early and stopper.best_epoch == 6 and stopper.best == 0.95


def test_the_protocol_page_names_every_method_fit_calls(tmp_path):
    """fit, resumed from a checkpoint, on a callback that has every method; each is documented."""
    calls = []

    class Spy:
        def __getattribute__(self, name):
            value = object.__getattribute__(self, name)
            if callable(value) and not name.startswith("__"):
                calls.append(name)
            return value

        def on_fit_start(self, state):
            pass

        def on_epoch_end(self, record, state):
            return state.epoch == 2

        def on_fit_end(self, state):
            pass

        def state_dict(self):
            return {}

        def load_state_dict(self, state):
            pass

    model, train, val = make_run()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for num_epochs in (1, 3):
        fit(model, train, opt, nn.CrossEntropyLoss(), num_epochs=num_epochs, device="cpu",
            progress=False, checkpoint_dir=tmp_path, resume=True, callbacks=[Spy()])  # fmt: skip
    called = set(calls)
    assert {"on_fit_start", "on_epoch_end", "on_fit_end", "state_dict", "load_state_dict"} <= called
    page = companion.callbacks.__doc__
    for name in called:
        assert f"``{name}(" in page, f"fit calls {name} on callbacks; the protocol omits it"


def test_resuming_with_other_callbacks_is_refused(tmp_path):
    model, train, val = make_run()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    fit(model, train, opt, nn.CrossEntropyLoss(), num_epochs=1, val_loader=val, device="cpu",
        progress=False, checkpoint_dir=tmp_path / "c", callbacks=[EarlyStopping()])  # fmt: skip
    with pytest.raises(ValueError, match="same callbacks, in the same order"):
        fit(model, train, opt, nn.CrossEntropyLoss(), num_epochs=2, val_loader=val,
            device="cpu", progress=False, checkpoint_dir=tmp_path / "c", resume=True,
            callbacks=[BestCheckpoint(tmp_path / "b.pt")])  # fmt: skip


# --- exact resume with callbacks, in fresh processes ---------------------------------------


def _run(tmp_path, name, mode, stop_at=0):
    out = tmp_path / f"{name}.pt"
    args = [str(HERE / "_resume_run.py"), str(out), str(tmp_path / "ckpt"), mode, str(stop_at)]
    subprocess.run([sys.executable, *args, "callbacks"], check=True, timeout=120)
    result = torch.load(out, weights_only=True)
    result["best_file"] = torch.load(tmp_path / "best.pt", weights_only=True)
    return result


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("full"), "full", "full")


def _assert_same_run(a, b):
    assert a["val_loss"] == b["val_loss"] and a["train_loss"] == b["train_loss"]
    assert a["stopped_early"] and b["stopped_early"] and not a["interrupted"]
    assert a["callbacks"] == b["callbacks"]
    for key in a["model"]:  # the restored best weights
        assert torch.equal(a["model"][key], b["model"][key]), key
    fa, fb = a["best_file"], b["best_file"]
    assert fa["epoch"] == fb["epoch"] and fa["extra"] == fb["extra"]
    for key in fa["model"]:
        assert torch.equal(fa["model"][key], fb["model"][key]), key


def test_the_reference_run_stops_early(uninterrupted):
    assert uninterrupted["stopped_early"]
    assert len(uninterrupted["val_loss"]) < 12  # it stopped before num_epochs
    best_epoch = uninterrupted["callbacks"][0]["best_epoch"]
    assert len(uninterrupted["val_loss"]) == best_epoch + 2  # patience 2


def test_a_resume_between_epochs_stops_at_the_same_epoch(tmp_path, uninterrupted):
    stop = len(uninterrupted["val_loss"]) - 1  # one epoch before the early stop
    first = _run(tmp_path, "first", "epochs", stop)
    assert len(first["val_loss"]) == stop and not first["stopped_early"]
    _assert_same_run(_run(tmp_path, "resumed", "resume"), uninterrupted)


def test_a_mid_epoch_resume_stops_at_the_same_epoch(tmp_path, uninterrupted):
    first = _run(tmp_path, "first", "signal", 13)  # inside epoch 2
    assert first["interrupted"]
    resumed = _run(tmp_path, "resumed", "resume")
    _assert_same_run(resumed, uninterrupted)
    again = _run(tmp_path, "again", "resume")  # resuming a run that stopped early trains no more
    _assert_same_run(again, uninterrupted)
