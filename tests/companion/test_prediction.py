"""Tests for companion/prediction.py: predict over a whole loader."""

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import companion
from companion import predict


def test_predict_returns_every_output_in_order_in_eval_mode():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 3))
    model.train()
    inputs, targets = torch.randn(23, 4), torch.randint(0, 3, (23,))
    outputs = predict(model, DataLoader(TensorDataset(inputs, targets), batch_size=5))
    model.eval()
    with torch.no_grad():
        expected = model(inputs)
    torch.testing.assert_close(outputs, expected)  # no dropout, same order, all 23 rows
    assert outputs.device.type == "cpu" and not outputs.requires_grad
    model.train()
    assert model.training and model[1].training  # modes restored


def test_predict_reads_bare_inputs_single_tuples_dicts_and_structured_outputs():
    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    inputs = torch.randn(10, 4)
    expected = model(inputs).detach()
    assert torch.allclose(predict(model, DataLoader(inputs, batch_size=3)), expected)
    assert torch.allclose(predict(model, DataLoader(TensorDataset(inputs), batch_size=4)), expected)
    dicts = [{"x": inputs[i : i + 5]} for i in (0, 5)]
    got = predict(model, dicts, batch_fn=lambda b: (b["x"], None))
    assert torch.allclose(got, expected)

    class Two(nn.Module):
        def forward(self, x):
            return {"double": 2 * x, "pair": (x, -x)}

    out = predict(Two(), DataLoader(inputs, batch_size=4))
    assert torch.equal(out["double"], 2 * inputs) and torch.equal(out["pair"][1], -inputs)


def test_predict_names_what_it_cannot_read():
    model = nn.Linear(4, 2)
    with pytest.raises(TypeError, match="batch 1 is a dict.*batch_fn"):
        predict(model, [{"x": torch.randn(2, 4)}])
    with pytest.raises(TypeError, match="batch_fn must return an \\(inputs, targets\\) pair"):
        predict(model, [torch.randn(2, 4)], batch_fn=lambda b: b)
    with pytest.raises(ValueError, match="no batches"):
        predict(model, iter([]))


def test_predict_is_exported():
    assert companion.predict is predict


def test_predict_returns_targets_in_loader_order_with_the_outputs():
    torch.manual_seed(0)
    model = nn.Linear(4, 3)
    inputs, labels = torch.randn(23, 4), torch.arange(23)
    loader = DataLoader(TensorDataset(inputs, labels), batch_size=5, shuffle=True)
    outputs, targets = predict(model, loader, targets=True)
    assert sorted(targets.tolist()) == list(range(23)) and targets.tolist() != list(range(23))
    torch.testing.assert_close(outputs, model(inputs[targets]).detach())  # row for row


def test_predict_targets_through_batch_fn_keep_their_structure():
    model = nn.Linear(4, 2)
    dicts = [{"x": torch.randn(3, 4), "y": torch.full((3,), i), "w": torch.ones(3) * i}
             for i in range(3)]  # fmt: skip
    outputs, (labels, weights) = predict(
        model, dicts, batch_fn=lambda b: (b["x"], (b["y"], b["w"])), targets=True
    )
    assert outputs.shape == (9, 2)
    assert labels.tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2] and weights.shape == (9,)


def test_predict_targets_true_on_batches_without_targets_names_the_argument():
    model = nn.Linear(4, 2)
    with pytest.raises(ValueError, match=r"targets=True, but batch 1 carries no targets.*Tensor"):
        predict(model, DataLoader(torch.randn(6, 4), batch_size=3), targets=True)
    with pytest.raises(ValueError, match=r"targets=True.*batch_fn returned targets None"):
        predict(model, [{"x": torch.randn(2, 4)}], batch_fn=lambda b: (b["x"], None), targets=True)
    with pytest.raises(TypeError, match="targets must be True or False, got 'yes'"):
        predict(model, [torch.randn(2, 4)], targets="yes")


def test_predict_names_batches_whose_other_axes_differ():
    model = nn.Linear(2, 3)  # (B, T, 2) -> (B, T, 3): one output per step
    padded = [(torch.randn(4, 5, 2), torch.zeros(4, 5)), (torch.randn(4, 7, 2), torch.ones(4, 7))]
    with pytest.raises(ValueError, match=r"the model returned shape \(4, 5, 3\) for batch 1 and "
                                         r"\(4, 7, 3\) for batch 2.*padded per batch"):  # fmt: skip
        predict(model, padded)
    same = [(torch.randn(4, 5, 2), torch.zeros(4, 5)), (torch.randn(4, 5, 2), torch.ones(2, 7))]
    with pytest.raises(ValueError, match=r"targets=True the batches held shape \(4, 5\) for "
                                         r"batch 1 and \(2, 7\) for batch 2"):  # fmt: skip
        predict(model, same, targets=True)
