"""Tests for companion/throughput.py: loader_throughput and ThroughputTable."""

import matplotlib
import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

from companion.throughput import ThroughputTable, loader_throughput

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
