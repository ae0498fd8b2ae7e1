"""Tests for companion/history.py."""

import matplotlib

matplotlib.use("Agg")

from companion import History  # noqa: E402


def make_history():
    h = History()
    for epoch in (1, 2, 3):
        h.append({"epoch": epoch, "train_loss": 1.0 / epoch, "val_loss": 1.2 / epoch,
                  "val_accuracy": 0.3 * epoch, "lr": 0.1, "time": 0.5})  # fmt: skip
    return h


def test_columns_and_round_trip():
    h = make_history()
    assert h.train_loss == [1.0, 0.5, 1 / 3] and h.lr == [0.1] * 3
    assert h.column("missing") == [None] * 3
    again = History.from_dict(h.to_dict())
    assert again.records == h.records and again.interrupted is False


def test_prints_as_a_table():
    text = str(make_history())
    assert text.splitlines()[0].split() == [
        "epoch",
        "train_loss",
        "val_loss",
        "val_accuracy",
        "lr",
        "time",
    ]
    assert len(text.splitlines()) == 4
    assert str(History()) == "History(no epochs)"


def test_plot_has_loss_and_metric_panels_with_whole_epochs():
    fig = make_history().plot()
    loss_ax, metric_ax = fig.axes
    labels = [line.get_label() for line in loss_ax.get_lines() if line.get_label()[0] != "_"]
    assert labels == ["train", "validation", "best: epoch 3"]
    assert [line.get_label() for line in metric_ax.get_lines()][-1] == "accuracy"
    ticks = [t for t in loss_ax.get_xticks() if 1 <= t <= 3]
    assert ticks and all(float(t).is_integer() for t in ticks)


def test_every_column_is_an_attribute_and_an_unknown_one_lists_the_columns():
    h = make_history()
    assert h.val_accuracy == h.column("val_accuracy") and h.epoch == [1, 2, 3]
    try:
        h.val_f1  # noqa: B018
    except AttributeError as err:
        assert "'val_f1'" in str(err) and "val_accuracy" in str(err)
    else:
        raise AssertionError("expected AttributeError")
    assert History().val_loss == [] and History().lr == []


def test_best_epoch_follows_the_validation_loss_then_the_training_loss():
    h = make_history()
    h.records[1]["val_loss"] = 0.1  # epoch 2 is the best on validation
    assert h.best_epoch() == 2
    assert h.best_epoch("val_accuracy", mode="max") == 3
    train_only = History([{"epoch": 1, "train_loss": 0.5}, {"epoch": 2, "train_loss": 0.7}])
    assert train_only.best_epoch() == 1 and History().best_epoch() is None


def test_plot_marks_the_best_epoch_saves_to_a_path_and_takes_a_log_scale(tmp_path):
    h = make_history()
    h.records[1]["val_loss"] = 0.1
    fig = h.plot(tmp_path / "curves.png", logy=True)
    loss_ax = fig.axes[0]
    assert loss_ax.get_yscale() == "log"
    star = [line for line in loss_ax.get_lines() if line.get_label() == "best: epoch 2"]
    assert star and list(star[0].get_xdata()) == [2] and list(star[0].get_ydata()) == [0.1]
    assert (tmp_path / "curves.png").stat().st_size > 1000
    assert make_history().plot().axes[0].get_yscale() == "linear"
