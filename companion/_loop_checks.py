"""The training loop's guards: arguments checked before any work, and errors from inside a step
translated into what the user passed and what fits.

Rule: a mistake that would train silently wrong (an optimizer of another model, a summed loss, a
Dataset where a loader belongs) is an error before the first batch; a mistake that only shows
inside the step (a model returning a tuple, float class targets, a half-precision model on the
CPU) keeps torch's error as its cause and says in one sentence what to change. The checks cost
nothing per step: the translation runs only when torch has already raised.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

import torch
from torch import nn
from torch.utils.data import Dataset


def check_model(model) -> None:
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")


def check_optimizer(optimizer, model: nn.Module, loss_fn=None) -> None:
    """The optimizer exists and updates this model's parameters (not another model's)."""
    if optimizer is None:
        raise TypeError(
            "optimizer is None; build one on this model's parameters, e.g. "
            "torch.optim.SGD(model.parameters(), lr=0.1)"
        )
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise TypeError(
            f"optimizer must be a torch.optim.Optimizer, got {type(optimizer).__name__}"
        )
    owned = {id(p) for p in model.parameters()}
    if isinstance(loss_fn, nn.Module):  # a loss with learnable weights is trained too
        owned |= {id(p) for p in loss_fn.parameters()}
    given = [p for group in optimizer.param_groups for p in group["params"]]
    if owned and given and not any(id(p) in owned for p in given):
        raise ValueError(
            f"optimizer holds {len(given)} parameter tensors, none of them this model's: it "
            f"was built on another model (or on a copy made before this one), so training "
            f"would change nothing. Build it after the model: "
            f"{type(optimizer).__name__}(model.parameters(), ...)"
        )


def check_scheduler(scheduler, optimizer) -> None:
    if scheduler is None:
        return
    own = getattr(scheduler, "optimizer", None)
    if own is not None and own is not optimizer:
        raise ValueError(
            f"scheduler ({type(scheduler).__name__}) was built on another optimizer, so it "
            f"would change the learning rate of an optimizer that does not train this model; "
            f"build it on the optimizer you pass: {type(scheduler).__name__}(optimizer, ...)"
        )


def check_loss_fn(loss_fn) -> None:
    if isinstance(loss_fn, type):
        raise TypeError(
            f"loss_fn is the class {loss_fn.__name__}; pass an instance: {loss_fn.__name__}()"
        )
    if not callable(loss_fn):
        raise TypeError(
            f"loss_fn must be callable as loss_fn(outputs, targets), got {type(loss_fn).__name__}"
        )
    reduction = getattr(loss_fn, "reduction", "mean")
    if reduction in ("sum", "none"):
        raise ValueError(
            f"loss_fn has reduction={reduction!r}; the loop needs the mean over the batch (it "
            f"reports per-sample means and weights batches by their size): use "
            f"{type(loss_fn).__name__}() with reduction='mean', the default"
        )


def check_loader(loader, name: str) -> None:
    """A loader, not a Dataset, and not empty (when it knows its length)."""
    if isinstance(loader, Dataset) and not isinstance(loader, torch.utils.data.IterableDataset):
        raise TypeError(
            f"{name} is a {type(loader).__name__}, a Dataset: iterating it gives single "
            f"samples, not batches. Wrap it in a DataLoader: DataLoader(dataset, "
            f"batch_size=64, shuffle={name == 'train_loader'})"
        )
    if not (hasattr(loader, "__iter__") or hasattr(loader, "__getitem__")):
        raise TypeError(
            f"{name} must be iterable, yielding (inputs, targets) batches; got "
            f"{type(loader).__name__}"
        )
    try:
        size = len(loader)
    except TypeError:  # an iterable of unknown length: checked when it ends
        return
    if size == 0:
        dataset = getattr(loader, "dataset", None)
        detail = ""
        if dataset is not None and hasattr(dataset, "__len__"):
            detail = (
                f" (its dataset has {len(dataset)} samples, batch_size="
                f"{getattr(loader, 'batch_size', '?')}, drop_last={getattr(loader, 'drop_last', '?')})"
            )
        raise ValueError(f"{name} yields no batches{detail}; is the dataset empty?")


def check_checkpoint_dir(checkpoint_dir) -> None:
    """The folder exists (or can be made) and is writable, before the first epoch trains."""
    if checkpoint_dir is None:
        return
    if not isinstance(checkpoint_dir, (str, os.PathLike)):
        raise TypeError(
            f"checkpoint_dir must be a folder path (str or Path), got "
            f"{type(checkpoint_dir).__name__}"
        )
    folder = Path(checkpoint_dir)
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(
            f"checkpoint_dir {os.fspath(folder)!r} is a file; pass a folder (it is created)"
        )
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as err:
        raise type(err)(
            f"checkpoint_dir {os.fspath(folder)!r} is not writable ({err.strerror or err}); "
            f"choose a folder you can write to"
        ) from None


def check_fit_schedule_args(
    num_epochs, scheduler_step, checkpoint_every, resume, checkpoint_dir, keep_last
) -> None:
    """fit's epochs, scheduler stepping and checkpoint arguments, and how they fit together."""
    if isinstance(num_epochs, bool) or not isinstance(num_epochs, int) or num_epochs < 0:
        raise ValueError(f"num_epochs must be a non-negative int, got {num_epochs!r}")
    if scheduler_step not in ("epoch", "step"):
        raise ValueError(f"scheduler_step must be 'epoch' or 'step', got {scheduler_step!r}")
    if checkpoint_every is not None and (
        not isinstance(checkpoint_every, int) or checkpoint_every < 1
    ):
        raise ValueError(f"checkpoint_every must be None or an int >= 1, got {checkpoint_every!r}")
    if resume and checkpoint_dir is None:
        raise ValueError("resume=True needs checkpoint_dir, the folder to resume from")
    if checkpoint_every is not None and checkpoint_dir is None:
        raise ValueError("checkpoint_every needs checkpoint_dir, the folder to write to")
    if isinstance(keep_last, bool) or not isinstance(keep_last, int) or keep_last < 1:
        raise ValueError(f"keep_last must be an int >= 1 (checkpoints kept), got {keep_last!r}")


def check_resume_epochs(start_epoch: int, num_epochs: int, path) -> None:
    if start_epoch > num_epochs:
        raise ValueError(
            f"num_epochs={num_epochs}, but the checkpoint resumed from ({path}) has already "
            f"trained {start_epoch} epochs: nothing would run. num_epochs is the total; pass "
            f"num_epochs > {start_epoch} to train further"
        )


def _describe(obj) -> str:
    if isinstance(obj, torch.Tensor):
        return f"a {str(obj.dtype).replace('torch.', '')} tensor of shape {tuple(obj.shape)}"
    if isinstance(obj, (tuple, list)):
        return f"a {type(obj).__name__} of {len(obj)}"
    return f"a {type(obj).__name__}"


def _floating_dtypes(model: nn.Module) -> set[torch.dtype]:
    return {p.dtype for p in model.parameters() if p.is_floating_point()}


def _inputs_dtypes(inputs) -> set[torch.dtype]:
    if isinstance(inputs, torch.Tensor):
        return {inputs.dtype} if inputs.is_floating_point() else set()
    if isinstance(inputs, (tuple, list)):
        return set().union(*(_inputs_dtypes(i) for i in inputs)) if inputs else set()
    if isinstance(inputs, Mapping):
        return set().union(*(_inputs_dtypes(i) for i in inputs.values())) if inputs else set()
    return set()


def forward_failed(model: nn.Module, inputs, err: Exception, where: str) -> Exception | None:
    """A clearer error for a failed forward pass, or None to let torch's error through."""
    params, given = _floating_dtypes(model), _inputs_dtypes(inputs)
    if params and given and not (given <= params) and "dtype" in str(err):
        p = ", ".join(sorted(str(d).replace("torch.", "") for d in params))
        i = ", ".join(sorted(str(d).replace("torch.", "") for d in given))
        return TypeError(
            f"the model's parameters are {p} but the inputs are {i} ({where}): keep the model "
            f"in float32 and use amp='bf16' (or 'fp16' on a GPU) for mixed precision; a "
            f".half() model does not train well on the CPU"
        )
    return None


def loss_failed(outputs, targets, loss_fn, err: Exception, where: str) -> Exception | None:
    """A clearer error for a failed loss, or None to let torch's error through."""
    name = type(loss_fn).__name__
    if isinstance(outputs, (tuple, list, Mapping)):
        return TypeError(
            f"the model returned {_describe(outputs)} ({where}), and {name} needs one tensor: "
            f"return a single tensor from forward(), or pass a loss_fn that picks the output, "
            f"e.g. lambda outputs, targets: criterion(outputs[0], targets)"
        )
    classification = isinstance(loss_fn, (nn.CrossEntropyLoss, nn.NLLLoss)) or (
        "cross_entropy" in getattr(loss_fn, "__name__", "")
    )
    if (
        classification
        and isinstance(targets, torch.Tensor)
        and targets.is_floating_point()
        and isinstance(outputs, torch.Tensor)
        and targets.shape != outputs.shape
    ):
        return TypeError(
            f"targets are {_describe(targets)} ({where}), but {name} takes int64 class "
            f"indices 0..C-1: convert the labels with targets.long() (in the dataset, once)"
        )
    return None


def check_loss_value(loss, loss_fn, where: str) -> None:
    if not isinstance(loss, torch.Tensor):
        raise TypeError(
            f"loss_fn returned {_describe(loss)} ({where}); it must return the loss tensor "
            f"(not loss.item()) so that backward() can run"
        )
    if loss.numel() != 1:
        raise ValueError(
            f"loss_fn returned {_describe(loss)} ({where}), not one number: reduce it with "
            f"reduction='mean' or .mean() (the loop needs the batch mean)"
        )
