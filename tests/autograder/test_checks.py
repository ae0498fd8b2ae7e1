"""autograder.checks: close() and reference_unavailable(), run in this process."""

from __future__ import annotations

import statistics
from collections import OrderedDict

import pytest
import torch
from torch import nn

import companion
from autograder.checks import DEFAULT_REFERENCES, ReferenceCallError, close, reference_unavailable


class _AlwaysEqual:
    def __eq__(self, other):
        return True

    __hash__ = object.__hash__


class _EqualFloat(float):
    def __eq__(self, other):
        return True

    __hash__ = float.__hash__


class _EqualTensor(torch.Tensor):
    def __eq__(self, other):
        return torch.ones((), dtype=torch.bool)


class _LyingDict(dict):
    def __getitem__(self, key):
        return 0.5


@pytest.mark.parametrize(
    ("actual", "expected"),
    [
        (torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0 + 1e-7])),
        (0.5, 0.5 + 1e-7),
        (3, 3),
        (True, True),
        ("fc.weight", "fc.weight"),
        (None, None),
        ({"loss": 0.25, "accuracy": 1.0}, {"accuracy": 1.0, "loss": 0.25}),
        (OrderedDict(w=torch.zeros(2)), {"w": torch.zeros(2)}),
        ([1.0, (2, "a")], (1.0, [2, "a"])),
        (float("nan"), float("nan")),
        (nn.Parameter(torch.ones(2)), torch.ones(2)),
    ],
)
def test_close_accepts_matching_values(actual, expected):
    close(actual, expected, "should not fail")


@pytest.mark.parametrize(
    ("actual", "expected", "detail"),
    [
        (torch.tensor([1.0, 2.1]), torch.tensor([1.0, 2.0]), "loss differs"),
        (torch.ones(3), torch.ones(2), "shape (3,), expected (2,)"),
        (torch.ones(2, dtype=torch.float64), torch.ones(2), "dtype torch.float64"),
        (0.51, 0.5, "got 0.51, expected 0.5"),
        (3.0, 3, "got 3.0, expected 3"),
        (1, True, "got 1, expected True"),
        ({"loss": 0.5}, {"loss": 0.5, "accuracy": 1.0}, "missing keys 'accuracy'"),
        ([1.0], [1.0, 2.0], "length 1, expected 2"),
        ({"a": [1.0, 2.0]}, {"a": [1.0, 3.0]}, "['a'][1]"),
        (
            torch.tensor(0.5),
            0.5,
            "got a 0-d tensor where a float was expected: return a Python number (use .item())",
        ),
        (_AlwaysEqual(), 0.5, "got an object of type _AlwaysEqual"),
        (_EqualFloat(0.0), 0.5, "got an object of type _EqualFloat"),
        (torch.zeros(2).as_subclass(_EqualTensor), torch.ones(2), "_EqualTensor"),
        (_LyingDict(loss=1.0), {"loss": 0.5}, "got an object of type _LyingDict"),
    ],
)
def test_close_rejects_mismatches_and_impostors_with_the_message(actual, expected, detail):
    with pytest.raises(AssertionError) as info:
        close(actual, expected, "loss differs")
    assert str(info.value).startswith("loss differs") and detail in str(info.value)


def test_close_custom_tolerance_and_bad_arguments():
    close(1.0, 1.05, "m", rtol=0.1, atol=0.0)
    with pytest.raises(TypeError, match="both rtol and atol"):
        close(1.0, 1.0, "m", rtol=0.1)
    with pytest.raises(TypeError, match="type _AlwaysEqual cannot be compared"):
        close(1.0, _AlwaysEqual(), "m")


def test_reference_unavailable_blocks_every_name_for_a_function():
    alias = statistics.fmean
    with reference_unavailable(statistics.fmean):
        with pytest.raises(ReferenceCallError, match="statistics.fmean is the reference"):
            alias([1.0, 2.0])
    assert alias([1.0, 2.0]) == 1.5


def test_reference_unavailable_restores_on_error():
    with pytest.raises(KeyError):
        with reference_unavailable("statistics:fmean"):
            raise KeyError("boom")
    assert statistics.fmean([2.0, 4.0]) == 3.0


def test_reference_unavailable_blocks_classes_subclasses_and_closures():
    def make_counter():
        count = 0

        def counter():
            nonlocal count
            count += 1
            return count

        return counter

    counter = make_counter()

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)

        def forward(self, x):
            return self.fc(x)

    class Mine(Block):
        pass

    with reference_unavailable(Block, counter):
        with pytest.raises(ReferenceCallError):
            Mine()
        with pytest.raises(ReferenceCallError):
            counter()
    assert Mine()(torch.zeros(2)).shape == (2,)
    assert counter() == 1


def test_default_references_are_the_companion_training_core():
    model = nn.Linear(3, 2)
    loader = [(torch.randn(4, 3), torch.randint(0, 2, (4,)))]
    evaluate = companion.evaluate  # imported under another name: still blocked
    with reference_unavailable():
        with pytest.raises(ReferenceCallError, match="not delegated to the companion"):
            evaluate(model, loader, nn.CrossEntropyLoss(), device="cpu")
        with pytest.raises(ReferenceCallError):
            companion.strip_prefixes({"module.w": torch.zeros(1)})
    result = evaluate(model, loader, nn.CrossEntropyLoss(), device="cpu")
    assert set(result) >= {"loss", "accuracy"}
    with reference_unavailable():  # private helpers of the reference are blocked too
        helpers = [
            f
            for f in vars(companion.loop).values()
            if getattr(f, "__module__", "") == "companion.loop"
            and callable(f)
            and getattr(f, "__name__", "").startswith("_")
        ]
        assert helpers
        for helper in helpers[:3]:
            with pytest.raises(ReferenceCallError):
                helper()
    assert DEFAULT_REFERENCES == ("companion",)


def test_reference_unavailable_rejects_bad_references():
    with pytest.raises(ValueError, match="cannot find 'companion.nothing:here'"):
        with reference_unavailable("companion.nothing:here"):
            pass
    with pytest.raises(TypeError, match="expected functions, classes"):
        with reference_unavailable(42):
            pass
