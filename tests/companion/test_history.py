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
    assert [line.get_label() for line in loss_ax.get_lines()] == ["train", "validation"]
    assert [line.get_label() for line in metric_ax.get_lines()] == ["accuracy"]
    ticks = [t for t in loss_ax.get_xticks() if 1 <= t <= 3]
    assert ticks and all(float(t).is_integer() for t in ticks)
