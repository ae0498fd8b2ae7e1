"""Tests for companion/debug.py: shape traces, device mismatches, graphs and leak detection."""

import sys

import matplotlib
import pytest
import torch
from torch import nn

from companion.debug import (
    AutogradGraph,
    LeakDetector,
    detect_leaks,
    draw_graph,
    find_device_mismatches,
    graph_ops,
    trace_shapes,
)

matplotlib.use("Agg")


class SmallCNN(nn.Module):
    """A conv/pool chain followed by a Linear whose in_features the test can get wrong."""

    def __init__(self, in_features=4 * 3 * 3):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.MaxPool2d(2))
        self.head = nn.Linear(in_features, 10)

    def forward(self, x):
        return self.head(torch.flatten(self.features(x), 1))


def _hook_count(model):
    return sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in model.modules())


# --- trace_shapes ------------------------------------------------------------------------------


def test_trace_shapes_records_every_module_in_call_order():
    model = SmallCNN()
    trace = trace_shapes(model, torch.zeros(2, 1, 8, 8))
    assert [r.name for r in trace] == [
        "",
        "features",
        "features.0",
        "features.1",
        "features.2",
        "head",
    ]
    assert [r.type for r in trace][2:] == ["Conv2d", "ReLU", "MaxPool2d", "Linear"]
    shapes = {r.name: (r.input_shapes, r.output_shapes) for r in trace}
    assert shapes["features.0"] == ([(2, 1, 8, 8)], (2, 4, 6, 6))
    assert shapes["head"] == ([(2, 36)], (2, 10))
    assert trace[0].params == sum(p.numel() for p in model.parameters())
    assert trace[-1].params == 36 * 10 + 10
    assert trace[-1].dtype == "float32" and trace[-1].device == "cpu"
    assert [r.depth for r in trace] == [0, 1, 2, 2, 2, 1]
    assert trace.output.shape == (2, 10) and trace.error is None
    assert _hook_count(model) == 0


def test_trace_shapes_prints_and_renders_as_a_table():
    trace = trace_shapes(SmallCNN(), torch.zeros(2, 1, 8, 8))
    text = str(trace)
    assert "output shapes" in text.splitlines()[0]
    assert "(2, 4, 6, 6)" in text and "features.0" in text and "Conv2d" in text
    html = trace._repr_html_()
    assert html.startswith("<table>") and "MaxPool2d" in html
    data = trace.to_dict()
    assert data["error"] is None and data["rows"][-1]["output_shapes"] == (2, 10)


def test_trace_shapes_on_error_reraises_with_the_table_and_removes_hooks():
    model = SmallCNN(in_features=30)  # the classic wrong in_features after a conv/pool chain
    with pytest.raises(RuntimeError, match="mat1 and mat2") as info:
        trace_shapes(model, torch.zeros(2, 1, 8, 8))
    assert _hook_count(model) == 0
    trace = info.value.shape_trace
    assert trace.failed.name == "head" and trace.failed.input_shapes == [(2, 36)]
    assert trace[0].status == "raised inside"
    assert [r.status for r in trace if r.name.startswith("features")] == ["ok"] * 4
    if sys.version_info >= (3, 11):
        note = "\n".join(info.value.__notes__)
        assert "<-- RAISED" in note and "(2, 36)" in note


def test_trace_shapes_can_return_the_failing_trace_instead():
    model = SmallCNN(in_features=30)
    trace = trace_shapes(model, torch.zeros(2, 1, 8, 8), raise_errors=False)
    assert isinstance(trace.error, RuntimeError)
    assert trace.failed.name == "head"
    text = str(trace)
    assert "<-- RAISED" in text and "head raised RuntimeError" in text
    assert "background:#fdd" in trace._repr_html_()
    assert trace.to_dict()["error"].startswith("RuntimeError: mat1 and mat2")
    assert _hook_count(model) == 0


def test_trace_shapes_handles_kwargs_tuples_and_lazy_layers():
    class TwoHeads(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.LazyLinear(5)
            self.a, self.b = nn.Linear(5, 2), nn.Linear(5, 3)

        def forward(self, x, scale=1.0):
            h = self.body(x) * scale
            return self.a(h), self.b(h)

    model = TwoHeads()
    trace = trace_shapes(model, torch.zeros(4, 7), scale=2.0)
    root = trace[0]
    assert root.input_shapes == [(4, 7), {"scale": "float"}]
    assert root.output_shapes == [(4, 2), (4, 3)]
    assert trace[1].params == 7 * 5 + 5  # counted after the lazy layer materialized


def test_trace_shapes_rejects_a_non_module():
    with pytest.raises(TypeError, match="nn.Module"):
        trace_shapes(torch.zeros(3), torch.zeros(3))


# --- find_device_mismatches --------------------------------------------------------------------


class WithConstant(nn.Module):
    """The chapter 6 bug: a constant assigned as a plain attribute, not a buffer."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.register_buffer("offset", torch.zeros(3))
        self.scale = torch.ones(3)  # never registered: model.to(device) leaves it behind
        self.extras = {"mask": torch.ones(3)}

    def forward(self, x):
        return self.fc(x) * self.scale + self.offset


def test_find_device_mismatches_finds_plain_attributes_left_behind_by_to():
    # "meta" stands in for a GPU: model.to() moves parameters and buffers, not attributes
    model = WithConstant().to("meta")
    report = find_device_mismatches(model, torch.zeros(2, 3), {"targets": torch.zeros(2)})
    assert report.expected == "meta"
    found = {(m.kind, m.name) for m in report}
    assert found == {
        ("attribute", "scale"),
        ("attribute", "extras['mask']"),
        ("input", "inputs[0]"),
        ("input", "inputs[1]['targets']"),
    }
    assert not report.ok and len(report) == 4
    assert report.checked == 2 + 1 + 2 + 2  # fc.weight and bias, offset, 2 attributes, 2 inputs
    assert set(report.unregistered) == {"scale", "extras['mask']"}
    text = str(report)
    assert "register_buffer" in text and "4 of 7 tensors are not on meta" in text
    assert report.to_dict()["mismatches"][0]["device"] == "cpu"
    assert "<table>" in report._repr_html_()


def test_find_device_mismatches_clean_and_explicit_expected():
    model = WithConstant()
    report = find_device_mismatches(model, torch.zeros(2, 3))
    assert report.ok and report.expected == "cpu"
    assert "All 6 tensors are on cpu" in str(report) and "scale" in str(report)
    # everything is on the CPU, so against "meta" every tensor is reported, parameters too
    kinds = {m.kind for m in find_device_mismatches(model, torch.zeros(1), expected="meta")}
    assert kinds == {"parameter", "buffer", "attribute", "input"}


def test_find_device_mismatches_a_layer_replaced_after_the_move():
    model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2)).to("meta")
    model[1] = nn.Linear(2, 2)  # added after .to(): stays on the CPU
    report = find_device_mismatches(model)
    assert {m.name for m in report} == {"1.weight", "1.bias"}
    assert all("model.to(device)" in m.hint for m in report)


def test_find_device_mismatches_errors():
    with pytest.raises(TypeError, match="nn.Module"):
        find_device_mismatches(torch.zeros(2))
    with pytest.raises(ValueError, match="expected='cpu'"):
        find_device_mismatches(nn.ReLU())
    with pytest.raises(TypeError, match="expected"):
        find_device_mismatches(nn.Linear(2, 2), expected=0)


# --- graph_ops and draw_graph ------------------------------------------------------------------


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


# --- leak detection ----------------------------------------------------------------------------


def _training_setup():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    batches = [(torch.randn(16, 8), torch.randn(16, 1)) for _ in range(10)]
    return model, optimizer, batches


def _step(model, optimizer, inputs, targets):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(inputs), targets)
    loss.backward()
    optimizer.step()
    return loss


def test_detect_leaks_catches_total_loss_plus_equals_loss():
    model, optimizer, batches = _training_setup()
    total_loss = 0.0
    it = iter(batches)

    def leaky_step():
        nonlocal total_loss
        loss = _step(model, optimizer, *next(it))
        total_loss += loss  # the bug: keeps every step's graph alive

    report = detect_leaks(leaky_step, steps=7, warmup=2)
    assert report.leaking and report.graph_leak
    assert "total_loss" in report.message
    assert "accumulate loss.item() instead of loss" in report.message
    nodes = [s.graph_nodes for s in report.measured]
    assert all(b > a for a, b in zip(nodes, nodes[1:], strict=False))
    del total_loss


def test_detect_leaks_passes_the_fixed_loop():
    model, optimizer, batches = _training_setup()
    total_loss = 0.0
    it = iter(batches)

    def fixed_step():
        nonlocal total_loss
        total_loss += _step(model, optimizer, *next(it)).item()

    report = detect_leaks(fixed_step, steps=7, warmup=2)
    assert not report.leaking, report.message
    assert report.message.startswith("OK")
    assert len({s.graph_nodes for s in report.measured}) == 1


def test_detect_leaks_catches_a_list_of_loss_tensors():
    model, optimizer, batches = _training_setup()
    history = []
    it = iter(batches)
    report = detect_leaks(lambda: history.append(_step(model, optimizer, *next(it))), steps=6)
    assert report.graph_leak
    assert "pile up" in report.message and "a list" in report.message
    assert "'history'" in report.message


def test_detect_leaks_memory_growth_without_a_graph():
    kept = []
    report = detect_leaks(lambda: kept.append(torch.ones(1024, 1024)), steps=6, warmup=1)
    assert not report.graph_leak
    assert report.memory_growth, str(report)
    assert "no autograd graph grows" in report.message
    kept.clear()


def test_detect_leaks_notes_a_step_that_returns_its_graph():
    model, optimizer, batches = _training_setup()
    it = iter(batches)
    report = detect_leaks(lambda: _step(model, optimizer, *next(it)), steps=5)
    assert not report.leaking and report.returns_graph
    assert "return loss.item()" in report.message


def test_leak_detector_watch_grades_a_whole_training_function():
    def train(model, loader, optimizer):
        total_loss = 0
        for inputs, targets in loader:
            total_loss = total_loss + _step(model, optimizer, inputs, targets)
        return total_loss.item()

    model, optimizer, batches = _training_setup()
    detector = LeakDetector()
    train(model, detector.watch(batches[:7]), optimizer)
    report = detector.report()
    assert len(report.samples) == 8 and report.graph_leak
    assert "local variable 'total_loss' in train()" in report.message

    def fixed(model, loader, optimizer):
        total_loss = 0.0
        for inputs, targets in loader:
            total_loss += _step(model, optimizer, inputs, targets).item()
        return total_loss

    detector = LeakDetector()
    fixed(model, detector.watch(batches[:7]), optimizer)
    assert not detector.report().leaking, detector.report().message


def test_leak_report_prints_plots_and_converts():
    report = detect_leaks(lambda: None, steps=5)
    text = str(report)
    assert "graph nodes" in text and "(warm-up)" in text
    assert report.to_dict()["leaking"] is False and len(report.to_dict()["samples"]) == 5
    assert "<table>" in report._repr_html_()
    ax = report.plot()
    assert ax.get_ylabel() == "live autograd nodes"


def test_detect_leaks_argument_errors():
    with pytest.raises(TypeError, match="lambda"):
        detect_leaks(42)
    with pytest.raises(ValueError, match="at least|fewer than 3"):
        detect_leaks(lambda: None, steps=3, warmup=2)
    with pytest.raises(ValueError, match="warmup"):
        LeakDetector(warmup=-1)
    short = LeakDetector(warmup=2)
    short.snapshot()
    assert "Not enough steps" in short.report().message and not short.report().leaking


@pytest.mark.requires_cuda
def test_detect_leaks_reads_cuda_memory():
    model = nn.Linear(256, 256).cuda()
    kept = []

    def step():
        out = model(torch.randn(512, 256, device="cuda"))
        kept.append(out.detach())  # 512 KiB per step, no graph

    report = detect_leaks(step, steps=6, memory_threshold_mib=0.25)
    assert report.samples[-1].cuda_bytes is not None
    assert report.memory_growth and not report.graph_leak
