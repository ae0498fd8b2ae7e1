"""Tests for companion/graph.py: graph_ops and draw_graph."""

import matplotlib
import pytest
import torch
from torch import nn

from companion.graph import AutogradGraph, draw_graph, graph_ops

matplotlib.use("Agg")


def test_graph_ops_lists_operations_and_leaves():
    w = torch.ones(3, requires_grad=True)
    b = torch.zeros(3, requires_grad=True)
    x = torch.randn(3)  # does not require grad: no node for it
    y = (w * x + b).sum()
    graph = graph_ops(y, names={"w": w, "b": b})
    assert isinstance(graph, AutogradGraph)
    assert graph.names == [
        "SumBackward0",
        "AddBackward0",
        "MulBackward0",
        "AccumulateGrad",
        "AccumulateGrad",
    ]
    assert graph.ops == ["SumBackward0", "AddBackward0", "MulBackward0"]
    assert sorted(n.label for n in graph.leaves) == ["b (3,)", "w (3,)"]
    assert graph.edges == [(0, 1), (1, 2), (1, 3), (2, 4)]
    assert graph[2].next == [4] and graph[4].label == "w (3,)"
    assert "MulBackward0" in str(graph) and "<table>" in graph._repr_html_()
    assert graph.to_dict()["edges"][0] == [0, 1]


def test_graph_ops_visits_a_shared_node_once():
    x = torch.tensor(2.0, requires_grad=True)
    graph = graph_ops(x * x)
    assert graph.names == ["MulBackward0", "AccumulateGrad"]
    assert graph[0].next == [1, 1]  # both operands are the same leaf


def test_graph_ops_with_model_parameters():
    model = nn.Linear(2, 1)
    loss = model(torch.randn(4, 2)).pow(2).mean()
    graph = graph_ops(loss, names=model.named_parameters())
    assert graph.ops[:2] == ["MeanBackward0", "PowBackward0"]
    assert sorted(n.label for n in graph.leaves) == ["bias (1,)", "weight (1, 2)"]


def test_graph_ops_errors_explain_missing_grad_fn():
    with pytest.raises(ValueError, match="leaf"):
        graph_ops(torch.ones(2, requires_grad=True))
    with pytest.raises(ValueError, match="no_grad"):
        graph_ops(torch.ones(2) * 2)
    with pytest.raises(TypeError, match="tensor"):
        graph_ops([1, 2])


def test_draw_graph_draws_nodes_edges_and_distinct_leaves():
    w = torch.ones(3, requires_grad=True)
    y = (w * 2 + w.exp()).sum()
    ax = draw_graph(y, names={"w": w})
    boxes = [t for t in ax.texts if t.get_text()]
    arrows = [t for t in ax.texts if not t.get_text()]
    labels = sorted(t.get_text() for t in boxes)
    assert labels == sorted(
        ["SumBackward0", "AddBackward0", "MulBackward0", "ExpBackward0", "w (3,)"]
    )
    colors = {t.get_text(): tuple(t.get_bbox_patch().get_facecolor()) for t in boxes}
    assert len({colors["w (3,)"], colors["MulBackward0"], colors["SumBackward0"]}) == 3
    assert colors["MulBackward0"] == colors["ExpBackward0"]  # every operation alike
    assert len(arrows) == len(graph_ops(y).edges) == 5
    # the output sits below the leaves: arrows run the way data flowed
    pos = {t.get_text(): t.get_position() for t in boxes}
    assert pos["SumBackward0"][1] < pos["w (3,)"][1]
    assert graph_ops(y).plot() is not None
