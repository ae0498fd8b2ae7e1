"""Tests for companion/leak_report.py: the verdict, its message, and how it prints."""

import matplotlib

from companion.leak_report import LeakReport, LeakSample
from companion.leaks import detect_leaks

matplotlib.use("Agg")

MIB = 1024 * 1024


def _samples(nodes, rss=None, holders=None):
    return [
        LeakSample(
            step=i,
            graph_nodes=n,
            graph_tensors=1,
            rss_bytes=None if rss is None else rss[i],
            cuda_bytes=None,
            holders={} if holders is None else holders[i],
        )
        for i, n in enumerate(nodes)
    ]


def test_leak_report_leaves_the_warmup_out_of_the_verdict():
    report = LeakReport(_samples([1, 9, 10, 10, 10, 10]), warmup=2, memory_threshold=MIB)
    assert [s.step for s in report.measured] == [2, 3, 4, 5]
    assert not report.leaking and report.message.startswith("OK: no leak over 3 steps")


def test_leak_report_names_the_holder_whose_graph_grew():
    nodes = [10, 10, 10, 20, 30, 40]
    holder = "local variable 'total_loss' in train()"
    holders = [
        {holder: {"nodes": n, "tensors": 1, "grad_fn": "AddBackward0", "shape": ()}} for n in nodes
    ]
    report = LeakReport(_samples(nodes, holders=holders), warmup=2, memory_threshold=MIB)
    assert report.graph_leak and report.leaking and not report.memory_growth
    message = report.message
    assert "grew from 10 to 40 over 3 steps (+10 per step)" in message
    assert f"Probably holding it: {holder}" in message and "(+30 since step 2)" in message
    assert "grad_fn=AddBackward0" in message


def test_leak_report_memory_growth_without_a_graph():
    rss = [0, 0, 0, 4 * MIB, 8 * MIB, 12 * MIB]
    report = LeakReport(_samples([5] * 6, rss=rss), warmup=2, memory_threshold=MIB)
    assert report.memory_growth and not report.graph_leak
    assert "no autograd graph grows" in report.message and "+4.0 MiB per step" in report.message
    below = LeakReport(_samples([5] * 6, rss=rss), warmup=2, memory_threshold=8 * MIB)
    assert not below.leaking


def test_leak_report_prints_plots_and_converts():
    report = detect_leaks(lambda: None, steps=5)
    text = str(report)
    assert "graph nodes" in text and "(warm-up)" in text
    assert report.to_dict()["leaking"] is False and len(report.to_dict()["samples"]) == 5
    assert "<table>" in report._repr_html_()
    ax = report.plot()
    assert ax.get_ylabel() == "live autograd nodes"
