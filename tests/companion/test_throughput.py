"""Tests for companion/throughput.py: loader_throughput and ThroughputTable."""

import matplotlib
import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

from companion.throughput import (
    ThroughputTable,
    choose_num_workers,
    loader_throughput,
    plan_num_workers,
)

matplotlib.use("Agg")


# ----------------------------------------------------------------------------- throughput


def _make_loader(num_workers, pin_memory):
    dataset = TensorDataset(torch.randn(256, 4), torch.arange(256))
    return DataLoader(dataset, batch_size=16, num_workers=num_workers, pin_memory=pin_memory)


def test_loader_throughput_table_prints_converts_and_plots():
    table = loader_throughput(_make_loader, num_workers=(0,), pin_memory=(False, True), batches=5)
    assert isinstance(table, ThroughputTable) and len(table.rows) == 2
    measured, pinned = table.rows
    assert measured["num_workers"] == 0 and measured["batches"] == 5
    assert measured["samples_per_s"] > 0 and measured["startup_s"] >= 0
    if not torch.accelerator.is_available():
        assert np.isnan(pinned["samples_per_s"]) and "skipped" in pinned["note"]
    columns = table.to_dict()
    assert set(columns) == set(ThroughputTable.columns)
    assert all(len(v) == 2 for v in columns.values())
    assert table.best() is measured or table.best()["samples_per_s"] >= measured["samples_per_s"]
    text = str(table)
    assert "num_workers" in text and "samples/s" in text and len(text.splitlines()) == 3
    assert "<table>" in table._repr_html_()
    ax = table.plot()
    assert ax.get_xlabel() == "num_workers" and len(ax.lines) >= 1
    import matplotlib.pyplot as plt

    plt.close("all")


def test_loader_throughput_with_one_worker_and_a_short_epoch():
    table = loader_throughput(_make_loader, num_workers=(1,), pin_memory=(False,), batches=100)
    (row,) = table.rows
    assert row["num_workers"] == 1 and row["batches"] == 15  # 16 batches, the first excluded
    assert "epoch ended" in row["note"] and row["samples_per_s"] > 0


def test_loader_throughput_bad_arguments():
    with pytest.raises(TypeError, match="make_loader"):
        loader_throughput(None)
    with pytest.raises(ValueError, match="num_workers"):
        loader_throughput(_make_loader, num_workers=(-1,))
    with pytest.raises(ValueError, match="no batch"):
        loader_throughput(lambda **kw: [], num_workers=(0,), pin_memory=(False,))


# ----------------------------------------------------------------------------- choosing workers


@pytest.mark.parametrize(
    "throughput, tolerance, expected",
    [
        ({0: 1000.0, 1: 1900.0, 2: 2000.0, 4: 1950.0}, 0.1, 1),  # within 10 %: fewer workers
        ({0: 1000.0, 1: 1900.0, 2: 2000.0, 4: 1950.0}, 0.0, 2),  # only the best
        ({4: 2000.0, 2: 1990.0, 0: 500.0, 1: 1200.0}, 0.05, 2),  # entries in any order
        ({3: 1000.0, 1: 1000.0, 2: 990.0}, 0.0, 1),  # a tie goes to fewer workers
        ({5: 12.5}, 0.1, 5),  # one measurement
        ({0: float("nan"), 1: 700.0, 2: 720.0}, 0.1, 1),  # skipped settings ignored
        ({0: 750.0, 1: 1000.0}, 0.25, 0),  # exactly at the tolerance counts
        ({0: 749.0, 1: 1000.0}, 0.25, 1),
        ({np.int64(0): np.float64(10.0), 2: 11.0}, 0.1, 0),  # NumPy numbers are numbers
    ],
)
def test_choose_num_workers(throughput, tolerance, expected):
    chosen = choose_num_workers(throughput, tolerance=tolerance)
    assert chosen == expected and type(chosen) is int


def test_choose_num_workers_leaves_its_input_alone():
    speeds = {0: float("nan"), 2: 5.0, 1: 3.0}
    choose_num_workers(speeds)
    assert list(speeds) == [0, 2, 1] and np.isnan(speeds[0])


@pytest.mark.parametrize(
    "throughput, tolerance, error, words",
    [
        ({}, 0.1, ValueError, "no measured entry"),
        ({0: float("nan")}, 0.1, ValueError, "no measured entry"),
        ({0: 1.0}, 1.0, ValueError, "tolerance must be in [0, 1)"),
        ({0: 1.0}, -0.1, ValueError, "got -0.1"),
        ({0: 1.0}, "10%", TypeError, "tolerance must be a number"),
        ({-1: 1.0}, 0.1, ValueError, "worker counts) must be an int >= 0, got -1"),
        ({True: 1.0}, 0.1, TypeError, "got True"),
        ({0: -3.0}, 0.1, ValueError, "throughput[0] must be a finite number >= 0"),
        ({0: float("inf")}, 0.1, ValueError, "got inf"),
        ({0: "fast"}, 0.1, TypeError, "throughput[0] must be a number"),
        ([(0, 1.0)], 0.1, TypeError, "must be a mapping"),
    ],
)
def test_choose_num_workers_bad_arguments(throughput, tolerance, error, words):
    with pytest.raises(error) as info:
        choose_num_workers(throughput, tolerance=tolerance)
    assert words in str(info.value)


def test_table_recommend_uses_each_count_at_its_faster_pin_setting():
    rows = [
        {"num_workers": 0, "pin_memory": True, "samples_per_s": 1850.0},
        {"num_workers": 0, "pin_memory": False, "samples_per_s": 800.0},
        {"num_workers": 2, "pin_memory": False, "samples_per_s": 2000.0},
        {"num_workers": 2, "pin_memory": True, "samples_per_s": float("nan")},
    ]
    assert ThroughputTable(rows).recommend(tolerance=0.1) == 0
    assert ThroughputTable(rows).recommend(tolerance=0.05) == 2
    with pytest.raises(ValueError, match="no row of this table was measured"):
        ThroughputTable(rows[3:]).recommend()


def _rows(*entries):
    return [{"num_workers": w, "batch_size": b, "samples_per_s": s} for w, b, s in entries]


@pytest.mark.parametrize(
    ("rows", "kwargs", "expected"),
    [
        # loading adds to the step without workers: 0 workers give 1/(1/3000+1/1000) = 750
        (_rows((0, 64, 3000.0), (1, 64, 1500.0)), {}, 1),
        # a loader far faster than the step: 0 workers are within 10 % of the best (952 vs 1000)
        (_rows((0, 64, 20000.0), (2, 64, 30000.0)), {}, 0),
        # rows at another batch size, or with more workers than cores - 1, do not apply
        (_rows((0, 64, 300.0), (1, 64, 900.0), (2, 256, 5000.0), (3, 64, 5000.0)), {}, 1),
        # NaN rows are skipped; a bound exactly at (1 - tolerance) * best counts
        (_rows((1, 64, float("nan")), (2, 64, 900.0), (3, 64, 1000.0)), {"cores": 8}, 2),
    ],
)
def test_plan_num_workers(rows, kwargs, expected):
    args = {"batch_size": 64, "step_samples_per_s": 1000.0, "cores": 4} | kwargs
    assert plan_num_workers(rows, **args) == expected


def test_plan_num_workers_says_when_nothing_fits():
    with pytest.raises(ValueError, match="batch_size=32"):
        plan_num_workers(_rows((0, 64, 100.0)), batch_size=32, step_samples_per_s=1.0, cores=2)
    with pytest.raises(ValueError, match="num_workers <= 0"):
        plan_num_workers(_rows((1, 64, 100.0)), batch_size=64, step_samples_per_s=1.0, cores=1)
