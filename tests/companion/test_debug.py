"""Tests for companion/debug.py: shape traces and device mismatches."""

import sys

import pytest
import torch
from torch import nn

from companion.debug import find_device_mismatches, trace_shapes


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
    model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2), nn.Linear(2, 2)).to("meta")
    model[0] = nn.Linear(2, 2)  # replaced after .to(): stays on the CPU
    report = find_device_mismatches(model)
    assert report.expected == "meta"  # where most of the model is, not its first parameter
    assert {m.name for m in report} == {"0.weight", "0.bias"}
    assert all("model.to(device)" in m.hint for m in report)


def test_find_device_mismatches_errors():
    with pytest.raises(TypeError, match="nn.Module"):
        find_device_mismatches(torch.zeros(2))
    with pytest.raises(ValueError, match="expected='cpu'"):
        find_device_mismatches(nn.ReLU())
    with pytest.raises(TypeError, match="expected"):
        find_device_mismatches(nn.Linear(2, 2), expected=0)


@pytest.mark.parametrize("device", ["cuda", torch.device("meta")])
def test_find_device_mismatches_a_device_passed_as_a_tensor_is_an_error(device):
    # the user's mistake: the device as the second argument, where it used to be ignored
    with pytest.raises(TypeError, match=r"as argument 2.*expected='(cuda|meta)'"):
        find_device_mismatches(nn.Linear(2, 2), device)
    with pytest.raises(TypeError, match="as argument 3"):
        find_device_mismatches(nn.Linear(2, 2), torch.zeros(1, 2), device)


# --- diagnose_profile --------------------------------------------------------------------------


def _steps(wait, compute, ops, reads):
    """Per-step records from per-step lists (or one value repeated)."""
    n = max(len(v) if isinstance(v, list) else 1 for v in (wait, compute, ops, reads))
    pick = lambda v, i: v[i] if isinstance(v, list) else v  # noqa: E731
    return [
        {
            "wait_ms": pick(wait, i),
            "compute_ms": pick(compute, i),
            "ops": pick(ops, i),
            "reads": pick(reads, i),
        }
        for i in range(n)
    ]


def test_diagnose_profile_healthy_run_shows_nothing():
    from companion.debug import diagnose_profile

    assert diagnose_profile(_steps(0.1, [9.0, 11.0, 10.0], 112, 0)) == set()


def test_diagnose_profile_names_each_problem_alone_and_together():
    from companion.debug import PROFILE_PROBLEMS, diagnose_profile

    assert diagnose_profile(_steps([13.0, 30.0], 9.0, 112, 0)) == {"input"}
    assert diagnose_profile(_steps(0.1, 9.0, 114, 1)) == {"sync"}
    assert diagnose_profile(_steps(0.04, 1.8, 513, 0)) == {"launch"}
    assert diagnose_profile(_steps(1.5, 0.3, 60, 2)) == set(PROFILE_PROBLEMS)


def test_diagnose_profile_judges_shares_and_time_per_operator_not_absolute_sizes():
    from companion.debug import diagnose_profile

    # a long wait beside a much longer step is no starvation; many heavy operators are no launch cost
    assert diagnose_profile(_steps(8.0, 300.0, 900, 0)) == set()
    # a short step of few operators, each one real work
    assert diagnose_profile(_steps(0.02, 3.0, 20, 0)) == set()


def test_diagnose_profile_needs_a_read_in_every_step_for_sync():
    from companion.debug import diagnose_profile

    assert diagnose_profile(_steps(0.1, 9.0, 112, [0, 0, 0, 5])) == set()
    assert diagnose_profile(_steps(0.1, 9.0, 112, [1, 3, 1, 2])) == {"sync"}


def test_diagnose_profile_does_not_change_its_input_and_accepts_tuples():
    from companion.debug import diagnose_profile

    records = _steps(13.0, 9.0, 112, 0)
    before = [dict(r) for r in records]
    assert diagnose_profile(tuple(records)) == {"input"}
    assert records == before


@pytest.mark.parametrize(
    "records, words",
    [
        ([], "non-empty"),
        ({"wait_ms": 1.0}, "list"),
        ([{"wait_ms": 1.0, "compute_ms": 2.0, "ops": 3}], "reads"),
        ([{"wait_ms": -1.0, "compute_ms": 2.0, "ops": 3, "reads": 0}], ">= 0"),
        ([{"wait_ms": float("nan"), "compute_ms": 2.0, "ops": 3, "reads": 0}], "finite"),
        ([{"wait_ms": "1", "compute_ms": 2.0, "ops": 3, "reads": 0}], "number"),
        ([3.0], "dict"),
    ],
)
def test_diagnose_profile_rejects_malformed_records(records, words):
    from companion.debug import diagnose_profile

    with pytest.raises(ValueError, match=words):
        diagnose_profile(records)


def test_diagnose_profile_reads_a_real_profile():
    """Records made with torch.profiler from two real loops: a per-step .item() is counted."""
    from torch.profiler import ProfilerActivity, profile, record_function

    from companion.debug import diagnose_profile

    torch.manual_seed(0)
    model = nn.Sequential(*[nn.Linear(16, 16) for _ in range(6)])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(4, 16)

    def records(read):
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for k in range(3):
                with record_function(f"compute {k}"):
                    optimizer.zero_grad()
                    loss = model(x).square().mean()
                    loss.backward()
                    optimizer.step()
                    if read:
                        loss.item()
        steps = [{"wait_ms": 0.0, "compute_ms": 0.0, "ops": 0, "reads": 0} for _ in range(3)]
        for event in prof.events():
            top, node = None, event
            while node is not None:
                top = node if node.name.startswith("compute ") else top
                node = node.cpu_parent
            if top is None:
                continue
            step = steps[int(top.name.split()[1])]
            if event is top:
                step["compute_ms"] += event.cpu_time_total / 1000
            else:
                step["ops"] += event.name.startswith("aten::")
                step["reads"] += event.name == "aten::_local_scalar_dense"
        return steps

    assert "sync" in diagnose_profile(records(read=True))
    assert "sync" not in diagnose_profile(records(read=False))
