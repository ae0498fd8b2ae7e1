"""Tests for companion/leaks.py: detect_leaks and LeakDetector on real training steps."""

import pytest
import torch
from torch import nn

from companion.leaks import LeakDetector, detect_leaks


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


def test_detect_leaks_names_an_attribute_and_a_validation_loop_without_no_grad():
    class Evaluator:
        def __init__(self, model):
            self.model, self.val_loss = model, 0.0

        def step(self, inputs, targets):  # validation, but without torch.no_grad()
            self.val_loss = self.val_loss + nn.functional.mse_loss(self.model(inputs), targets)

    model, _, batches = _training_setup()
    evaluator = Evaluator(model)
    it = iter(batches)
    report = detect_leaks(lambda: evaluator.step(*next(it)), steps=6)
    assert report.graph_leak
    assert "attribute 'val_loss' of an Evaluator" in report.message


def test_detect_leaks_memory_growth_without_a_graph():
    kept = []
    # 64 MiB a step: above malloc's largest mmap threshold, so every step maps fresh pages
    # (smaller blocks can reuse memory freed by earlier tests and leave RSS flat)
    report = detect_leaks(lambda: kept.append(torch.ones(16 * 1024 * 1024)), steps=6, warmup=1)
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
