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


def test_run_check_lists_every_independent_failure_and_ends_at_a_plain_assert():
    from autograder.checks import expect, run_check, soft

    def check(got, seed):
        with soft():
            close(got["loss"], 0.5, "the loss differs: is it the batch mean?")
        with soft():
            close(got["steps"], 3, "the optimizer should step once per batch")
        expect(got["mode"] == "train", "the model should be left in training mode")
        assert got["loss"] > 0, "the loss should be positive"
        raise AssertionError("never reached when the plain assert above fails")

    got = {"loss": -1.0, "steps": 2, "mode": "eval"}
    failures = [m.split("\n")[0] for m in run_check(check, got, 0)]  # pytest adds lines to asserts
    assert failures == [
        "the loss differs: is it the batch mean? (got -1.0, expected 0.5)",
        "the optimizer should step once per batch (got 2, expected 3)",
        "the model should be left in training mode",
        "the loss should be positive",
    ]
    assert run_check(lambda got, seed: None, got, 0) == []
    with pytest.raises(ValueError):  # other errors are the grader's to report
        run_check(lambda got, seed: int("x"), got, 0)


def test_soft_and_expect_raise_at_once_outside_a_check():
    from autograder.checks import expect, soft

    with pytest.raises(AssertionError, match="first"):
        with soft():
            raise AssertionError("first")
    with pytest.raises(AssertionError, match="second"):
        expect(False, "second")
    expect(True, "never raised")


def test_hidden_test_in_place_reports_every_distinct_failure_of_every_seed():
    from autograder.checks import hidden_test, soft

    def check(got, seed):
        with soft():
            close(got["sum"], 2 * seed, "the sum is wrong: are both terms added?")
        with soft():
            close(got["sign"], 1, "the sign is wrong")

    with pytest.raises(AssertionError) as caught:
        hidden_test(lambda seed: {"sum": seed, "sign": -1}, check, seeds=(1, 2))
    message = str(caught.value)
    assert message.count("the sign is wrong") == 1  # the same message once, not per seed
    assert "(got 1, expected 2)" in message and "(got 2, expected 4)" in message


def test_judge_lists_the_failures_of_every_hidden_input_once():
    from autograder.grader.judge import SEPARATOR, judge

    hidden = (
        "from autograder.checks import close, hidden_test, soft\n"
        "def _check(got, seed):\n"
        "    with soft():\n"
        "        close(got['a'], seed, 'a is wrong')\n"
        "    with soft():\n"
        "        close(got['b'], 0, 'b should be 0')\n"
        "hidden_test(lambda seed: None, _check, seeds=(1, 2, 3))\n"
    )
    probe = [
        {"seed": 1, "data": {"a": 1, "b": 5}},
        {"seed": 2, "error": ["ZeroDivisionError", "division by zero"]},
        {"seed": 3, "data": {"a": 4, "b": 0}},
    ]
    verdict = judge("ch09_x_tests", hidden, {"visible": None, "probe": probe})
    assert not verdict.passed and verdict.ename == "AssertionError"
    assert verdict.evalue.split(SEPARATOR) == [
        "b should be 0 (got 5, expected 0)",
        "ZeroDivisionError: division by zero",
        "a is wrong (got 4, expected 3)",
    ]
    passing = [{"seed": s, "data": {"a": s, "b": 0}} for s in (1, 2, 3)]
    assert judge("ch09_x_tests", hidden, {"visible": None, "probe": passing}).passed


def test_feedback_keeps_each_failure_readable_and_bounded():
    from autograder.grader.grade import _FEEDBACK_CHARS, _sanitize
    from autograder.grader.judge import SEPARATOR

    long = "the weights differ " * 40
    feedback = _sanitize(
        f"AssertionError: {long}{SEPARATOR}the secret line here{SEPARATOR}b",
        {"the secret line here"},
    )
    first, second, third = feedback.split(" | ")
    assert len(first) <= _FEEDBACK_CHARS and first.endswith("…")
    assert second == "[hidden]" and third == "b"


def test_to_data_notes_values_whose_comparisons_always_agree():
    from autograder import checks

    class Honest:
        def __eq__(self, other):
            return isinstance(other, Honest)

        __hash__ = object.__hash__

    checks._SUSPECTS.clear()
    checks.to_data([_EqualFloat(1.0), torch.zeros(1).as_subclass(_EqualTensor), _AlwaysEqual()])
    here = "tests.autograder.test_checks."
    assert checks._SUSPECTS == [
        f"a float subclass ({here}_EqualFloat)",
        "a tensor subclass (_EqualTensor)",
        f"an object of type {here}_AlwaysEqual",
    ]
    checks._SUSPECTS.clear()
    checks.to_data([Honest(), nn.Parameter(torch.ones(1)), 1.5, {"a": torch.ones(1)}])
    assert checks._SUSPECTS == []


def test_to_data_notes_a_tensor_subclass_that_lies_about_itself():
    """Chapter 3's attack: float64 storage under a dtype that says float32. It earns nothing
    (the data crosses as a plain float64 tensor), and now it is named for review too."""
    from autograder import checks

    class Float32ish(torch.Tensor):
        @property
        def dtype(self):
            return torch.float32

    class Plain(torch.Tensor):  # a subclass that redefines nothing a check reads
        def describe(self):
            return "mine"

    checks._SUSPECTS.clear()
    crossed = checks.to_data(torch.zeros(2, dtype=torch.float64).as_subclass(Float32ish))
    assert crossed.dtype == torch.float64 and type(crossed) is torch.Tensor
    [said] = checks._SUSPECTS
    assert said.startswith("a tensor subclass (") and said.endswith(
        "Float32ish) that redefines dtype"
    )
    checks._SUSPECTS.clear()
    checks.to_data(torch.zeros(2).as_subclass(Plain))
    assert checks._SUSPECTS == []
