"""companion/_loop_checks.py through fit, train_one_epoch and evaluate: each test is a user's
mistake, and each asserts the error names it before any training happened (or, for mistakes
that only show inside a step, that torch's error gets a sentence naming the fix)."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from companion import evaluate, fit, save_checkpoint, train_one_epoch


def _data(n=32, classes=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    return TensorDataset(
        torch.randn(n, 4, generator=g), torch.randint(0, classes, (n,), generator=g)
    )


def _setup(seed=0):
    torch.manual_seed(seed)
    model = nn.Linear(4, 3)
    return model, DataLoader(_data(), batch_size=8), torch.optim.SGD(model.parameters(), lr=0.1)


def _fit(model, loader, optimizer, loss_fn=None, **kwargs):
    kwargs.setdefault("num_epochs", 1)
    return fit(model, loader, optimizer, loss_fn or nn.CrossEntropyLoss(), device="cpu",
               progress=False, **kwargs)  # fmt: skip


def _unchanged(model, before) -> bool:
    return all(torch.equal(a, b) for a, b in zip(before.values(), model.state_dict().values()))


# ----------------------------------------------------------------- silent wrong results, now errors


def test_an_optimizer_built_on_another_model_is_refused_before_training():
    model, loader, _ = _setup()
    other = copy.deepcopy(model)  # the classic: the optimizer was built before a re-creation
    before = copy.deepcopy(model.state_dict())
    with pytest.raises(ValueError, match="none of them this model's.*SGD\\(model.parameters"):
        _fit(model, loader, torch.optim.SGD(other.parameters(), lr=0.1))
    assert _unchanged(model, before)
    with pytest.raises(ValueError, match="none of them this model's"):
        train_one_epoch(model, loader, torch.optim.SGD(other.parameters(), lr=0.1),
                        nn.CrossEntropyLoss(), device="cpu")  # fmt: skip


def test_a_loss_with_learnable_weights_may_share_the_optimizer():
    model, loader, _ = _setup()

    class Weighted(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(torch.ones(()))

        def forward(self, outputs, targets):
            return nn.functional.cross_entropy(outputs * self.scale, targets)

    loss_fn = Weighted()
    optimizer = torch.optim.SGD([*model.parameters(), *loss_fn.parameters()], lr=0.1)
    assert len(_fit(model, loader, optimizer, loss_fn)) == 1


def test_a_scheduler_of_another_optimizer_is_refused():
    model, loader, optimizer = _setup()
    stray = torch.optim.SGD(nn.Linear(1, 1).parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(stray, step_size=1)
    with pytest.raises(ValueError, match="scheduler \\(StepLR\\) was built on another optimizer"):
        _fit(model, loader, optimizer, scheduler=scheduler)


def test_an_empty_training_loader_is_an_error_not_a_nan_history():
    model, _, optimizer = _setup()
    empty = DataLoader(_data(n=5), batch_size=8, drop_last=True)
    with pytest.raises(ValueError, match="train_loader yields no batches \\(its dataset has 5 "
                       "samples, batch_size=8, drop_last=True\\)"):  # fmt: skip
        _fit(model, empty, optimizer)

    def nothing():
        return iter(())

    class NoLength:  # an iterable that cannot tell its length up front
        def __iter__(self):
            return nothing()

    with pytest.raises(ValueError, match="train_loader yielded no batches in epoch 1"):
        _fit(model, NoLength(), optimizer)


def test_a_dataset_passed_where_the_loader_belongs_is_refused():
    model, _, optimizer = _setup()
    with pytest.raises(TypeError, match="train_loader is a TensorDataset, a Dataset.*DataLoader"):
        _fit(model, _data(), optimizer)
    with pytest.raises(TypeError, match="val_loader is a TensorDataset.*shuffle=False"):
        _fit(model, DataLoader(_data(), batch_size=8), optimizer, val_loader=_data())
    with pytest.raises(TypeError, match="loader is a TensorDataset"):
        evaluate(model, _data(), nn.CrossEntropyLoss(), device="cpu")


def test_resuming_with_fewer_epochs_than_the_checkpoint_says_so(tmp_path):
    model, loader, optimizer = _setup()
    _fit(model, loader, optimizer, num_epochs=2, checkpoint_dir=tmp_path)
    with pytest.raises(ValueError, match="num_epochs=1, but the checkpoint .* already trained 2"):
        _fit(model, loader, optimizer, num_epochs=1, checkpoint_dir=tmp_path, resume=True)
    same = _fit(model, loader, optimizer, num_epochs=2, checkpoint_dir=tmp_path, resume=True)
    assert len(same) == 2  # resuming a finished run returns its history, as before


@pytest.mark.parametrize("reduction", ["sum", "none"])
def test_a_loss_that_is_not_a_batch_mean_is_refused(reduction):
    model, loader, optimizer = _setup()
    with pytest.raises(ValueError, match=f"reduction='{reduction}'.*reduction='mean'"):
        _fit(model, loader, optimizer, nn.CrossEntropyLoss(reduction=reduction))
    with pytest.raises(ValueError, match=f"reduction='{reduction}'"):
        evaluate(model, loader, nn.CrossEntropyLoss(reduction=reduction), device="cpu")


# ---------------------------------------------------------------- errors that came late or deep


def test_optimizer_none_and_a_loss_class_are_named():
    model, loader, optimizer = _setup()
    with pytest.raises(TypeError, match="optimizer is None; build one"):
        _fit(model, loader, None)
    with pytest.raises(TypeError, match="loss_fn is the class CrossEntropyLoss; pass an instance"):
        _fit(model, loader, optimizer, nn.CrossEntropyLoss)


def test_a_checkpoint_dir_that_is_a_file_fails_before_the_first_epoch(tmp_path):
    model, loader, optimizer = _setup()
    blocker = tmp_path / "runs"
    blocker.write_text("not a folder")
    before = copy.deepcopy(model.state_dict())
    with pytest.raises(NotADirectoryError, match="checkpoint_dir .*runs' is a file"):
        _fit(model, loader, optimizer, checkpoint_dir=blocker)
    with pytest.raises(OSError, match="checkpoint_dir .* is not writable"):
        _fit(model, loader, optimizer, checkpoint_dir=blocker / "inside")
    assert _unchanged(model, before)


def test_an_empty_validation_loader_fails_before_training_and_is_named():
    model, loader, optimizer = _setup()
    before = copy.deepcopy(model.state_dict())
    empty = DataLoader(_data(n=0), batch_size=8)
    with pytest.raises(ValueError, match="val_loader yields no batches"):
        _fit(model, loader, optimizer, val_loader=empty)
    assert _unchanged(model, before)


# --------------------------------------------------------- mistakes that show only inside a step


def test_a_loss_that_returns_one_value_per_sample_is_named():
    model, loader, optimizer = _setup()

    def per_sample(outputs, targets):  # a hand-written loss that forgot the mean
        return nn.functional.cross_entropy(outputs, targets, reduction="none")

    with pytest.raises(ValueError, match=r"returned a float32 tensor of shape \(8,\) \(epoch 1, "
                       r"batch 1\), not one number"):  # fmt: skip
        _fit(model, loader, optimizer, per_sample)


def test_float_class_targets_say_long():
    model, _, optimizer = _setup()
    inputs, targets = _data().tensors
    loader = DataLoader(TensorDataset(inputs, targets.float()), batch_size=8)
    with pytest.raises(TypeError, match=r"targets are a float32 tensor of shape \(8,\).*"
                       r"int64 class indices.*targets.long\(\)") as info:  # fmt: skip
        _fit(model, loader, optimizer)
    assert isinstance(info.value.__cause__, RuntimeError)  # torch's own error is kept


def test_a_half_precision_model_on_the_cpu_says_keep_float32():
    model, loader, _ = _setup()
    model.half()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(TypeError, match="parameters are float16 but the inputs are float32.*"
                       "amp='bf16'"):  # fmt: skip
        _fit(model, loader, optimizer)


def test_a_model_that_returns_a_tuple_says_how_to_pick_the_output():
    class TwoHeads(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Linear(4, 3)

        def forward(self, x):
            out = self.body(x)
            return out, out.detach()

    torch.manual_seed(0)
    model = TwoHeads()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(_data(), batch_size=8)
    with pytest.raises(TypeError, match=r"the model returned a tuple of 2 \(epoch 1, batch 1\)"):
        _fit(model, loader, optimizer)
    with pytest.raises(TypeError, match="the model returned a tuple of 2"):
        train_one_epoch(model, loader, optimizer, nn.CrossEntropyLoss(), device="cpu")


def test_guards_leave_a_correct_run_alone(tmp_path):
    model, loader, optimizer = _setup()
    path = save_checkpoint(tmp_path / "x.pt", model=model)
    assert path.exists()
    history = _fit(model, loader, optimizer, val_loader=loader, checkpoint_dir=tmp_path / "ck")
    assert len(history) == 1 and history.val_loss[-1] > 0
