"""Tests for companion/metrics.py: stateful metrics in evaluate and fit, and F1Score."""

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import companion
from companion import F1Score, evaluate, fit


def predictions(n=203, classes=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    targets = torch.randint(0, classes, (n,), generator=g)
    outputs = torch.randn(n, classes, generator=g)
    outputs[torch.arange(n), targets] += 0.8  # better than chance, far from perfect
    return outputs, targets


def hand_macro_f1(preds, targets, classes):
    scores = []
    for c in range(classes):
        tp = int(((preds == c) & (targets == c)).sum())
        fp = int(((preds == c) & (targets != c)).sum())
        fn = int(((preds != c) & (targets == c)).sum())
        if tp + fp + fn:
            scores.append(2 * tp / (2 * tp + fp + fn))
    return sum(scores) / len(scores)


class Identity(nn.Module):
    """Returns the stored scores of each sample: evaluate then scores known predictions."""

    def __init__(self):
        super().__init__()
        self.dummy = nn.Parameter(torch.zeros(()))

    def forward(self, outputs):
        return outputs + self.dummy


@pytest.mark.parametrize("average", ["macro", "micro", "weighted"])
def test_f1_over_a_whole_loader_equals_scikit_learn(average):
    outputs, targets = predictions()
    loader = DataLoader(TensorDataset(outputs, targets), batch_size=16)  # uneven last batch
    scores = evaluate(Identity(), loader, nn.CrossEntropyLoss(),
                      metrics={"f1": F1Score(num_classes=5, average=average)})  # fmt: skip
    preds = outputs.argmax(dim=1)
    try:
        from sklearn.metrics import f1_score
    except ImportError:
        if average != "macro":
            pytest.skip("scikit-learn is not installed")
        expected = hand_macro_f1(preds, targets, 5)
    else:
        expected = f1_score(targets.numpy(), preds.numpy(), average=average)
    assert scores["f1"] == pytest.approx(expected, rel=1e-12, abs=1e-12)
    if average == "macro":
        assert scores["f1"] == pytest.approx(hand_macro_f1(preds, targets, 5), rel=1e-12)


def test_a_class_missing_from_targets_and_predictions_is_left_out_as_sklearn_does():
    f1 = F1Score(num_classes=4)
    f1.update(torch.eye(4)[[0, 1, 1, 2]], torch.tensor([0, 1, 2, 2]))  # class 3 never appears
    assert f1.compute() == pytest.approx((1 + 2 / 3 + 2 / 3) / 3)
    f1.reset()
    assert f1.compute() == 0.0


def test_a_per_batch_function_is_a_sample_weighted_mean_and_differs_from_the_set_f1():
    outputs, targets = predictions(n=40, classes=3, seed=1)
    loader = DataLoader(TensorDataset(outputs, targets), batch_size=7)

    def batch_f1(outputs, targets):
        f1 = F1Score(num_classes=3)
        f1.update(outputs, targets)
        return f1.compute()

    scores = evaluate(Identity(), loader, nn.CrossEntropyLoss(),
                      metrics={"batch_f1": batch_f1, "f1": F1Score(num_classes=3)})  # fmt: skip
    per_batch = [(batch_f1(o, t), len(t)) for o, t in loader]
    assert scores["batch_f1"] == pytest.approx(sum(v * n for v, n in per_batch) / 40)
    assert scores["batch_f1"] != pytest.approx(scores["f1"])  # why the stateful kind exists
    assert list(scores) == ["loss", "accuracy", "batch_f1", "f1"]


class TorchmetricsLike:
    """The torchmetrics protocol by hand: tensor state, tensor result, reset between passes."""

    def __init__(self):
        self.reset_calls = 0
        self.reset()

    def reset(self):
        self.reset_calls += 1
        self.total = torch.tensor(0.0)
        self.count = torch.tensor(0)

    def update(self, outputs, targets):
        self.total += (outputs.argmax(dim=1) != targets).sum()
        self.count += targets.numel()

    def compute(self):
        return self.total / self.count


def test_a_torchmetrics_style_object_is_reset_updated_and_computed_every_epoch():
    outputs, targets = predictions(n=64, classes=3)
    g = torch.Generator().manual_seed(0)
    inputs = torch.randn(64, 4, generator=g)
    torch.manual_seed(0)
    model = nn.Linear(4, 3)
    error_rate = TorchmetricsLike()
    history = fit(model, DataLoader(TensorDataset(inputs, targets), batch_size=16),
                  torch.optim.SGD(model.parameters(), lr=0.1), nn.CrossEntropyLoss(),
                  num_epochs=3, device="cpu", progress=False,
                  val_loader=DataLoader(TensorDataset(inputs, targets), batch_size=10),
                  metrics={"error": error_rate}, eval_train=True)  # fmt: skip
    assert error_rate.reset_calls >= 1 + 3 * 2  # a fresh start for every pass
    assert history.val_error == pytest.approx([1 - a for a in history.val_accuracy])
    assert history.train_error == pytest.approx([1 - a for a in history.train_accuracy])


@pytest.mark.parametrize(
    ("metrics", "match"),
    [
        ([F1Score(3)], "metrics must be a dict"),
        ({"f1": F1Score}, "pass an instance"),
        ({"f1": 0.5}, "must be a function fn\\(outputs, targets\\)"),
    ],
)
def test_bad_metrics_are_named(metrics, match):
    with pytest.raises(TypeError, match=match):
        evaluate(nn.Linear(4, 3), [(torch.randn(2, 4), torch.tensor([0, 1]))],
                 nn.CrossEntropyLoss(), metrics=metrics)  # fmt: skip


def test_a_metric_that_computes_a_vector_is_refused():
    class PerClass(TorchmetricsLike):
        def compute(self):
            return torch.zeros(3)

    with pytest.raises(ValueError, match="tensor of shape \\(3,\\)"):
        evaluate(nn.Linear(4, 3), [(torch.randn(2, 4), torch.tensor([0, 1]))],
                 nn.CrossEntropyLoss(), metrics={"per_class": PerClass()})  # fmt: skip


def test_f1_bad_arguments_and_shapes():
    with pytest.raises(ValueError, match="num_classes must be an int >= 2"):
        F1Score(1)
    with pytest.raises(ValueError, match="average must be"):
        F1Score(3, average="binary")
    with pytest.raises(ValueError, match="outputs of shape \\(N, 3, ...\\)"):
        F1Score(3).update(torch.randn(4, 2), torch.tensor([0, 1, 0, 1]))


def test_f1_is_exported():
    assert companion.F1Score is F1Score
