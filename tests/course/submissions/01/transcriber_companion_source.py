# Corpus: transcriber (issue 39): every exercise that has a companion counterpart, answered with the
# companion's own source as inspect.getsource shows it, helpers it calls pasted above it, imports
# added. Where the exercise asks what the companion does (most of them), that still earns the
# points: the flag is what stops it. Where it asks for another signature or policy, it loses them.
# review: matches companion
# %% ch01_freeze_for_finetuning points=4 feedback="passed"
from collections.abc import Sequence
import torch
from torch import nn


def _stay_in_eval(self: nn.Module, mode: bool = True) -> nn.Module:
    # Bound to a frozen BatchNorm as its own ``train``: ``model.train()`` reaches every child
    # through ``child.train(mode)``, so this keeps the layer on its running statistics.
    return nn.Module.train(self, False)


def freeze_for_finetuning(model: nn.Module, trainable: Sequence[str], lr: float) -> torch.optim.SGD:
    """Freeze every part of ``model`` except the submodules named in ``trainable``.

    A parameter is trainable when it belongs to a named module, at any depth (``"layer4"``
    covers ``layer4.0.conv1.weight``; names are matched as module names, so ``"conv1"`` does
    not cover ``layer1.0.conv1``). Every other parameter stops requiring grad, and every
    BatchNorm layer outside the named modules is put in eval mode and kept there: its ``train``
    is replaced, so a later ``model.train()`` leaves it on its running statistics. The trainable
    part is left in training mode.

    A second call on the same model starts over with the new names (gradual unfreezing:
    ``["fc"]`` first, ``["layer4", "fc"]`` later): the replaced ``train`` of a BatchNorm layer
    that the new names cover is removed again. The replacement is bound to its layer, so a
    ``copy.deepcopy`` of the prepared model keeps its own layers frozen.

    Args:
        model: the pretrained model, changed in place.
        trainable: module names as ``model.named_modules()`` gives them, e.g. ``["layer4", "fc"]``.
        lr: the learning rate of the returned optimizer.

    Returns:
        ``torch.optim.SGD(params, lr=lr, momentum=0.9)`` over the trainable parameters only.

    Raises:
        TypeError: ``trainable`` is a single string instead of a list of names.
        ValueError: a name is not a submodule of ``model``, or nothing would be trained.

    Example:
        >>> model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
        >>> optimizer = freeze_for_finetuning(model, ["2"], lr=0.1)
        >>> [name for name, p in model.named_parameters() if p.requires_grad]
        ['2.weight', '2.bias']
        >>> model.train()[1].training
        False
        >>> _ = freeze_for_finetuning(model, ["1", "2"], lr=0.1)  # unfreeze the BatchNorm too
        >>> model.train()[1].training
        True
    """
    if isinstance(trainable, str):
        raise TypeError(
            f"trainable must be a list of module names, got the string {trainable!r}: "
            f"write [{trainable!r}]"
        )
    names = dict(model.named_modules())
    unknown = [t for t in trainable if not t or t not in names]
    if unknown:
        children = [n for n, _ in model.named_children()]
        raise ValueError(
            f"trainable names {unknown} are not submodules of the model; names come from "
            f"model.named_modules(), e.g. its children {children}"
        )
    prefixes = tuple(trainable)

    def inside(name: str) -> bool:
        return any(name == p or name.startswith(p + ".") for p in prefixes)

    params = []
    for name, param in model.named_parameters():
        param.requires_grad_(inside(name))
        if inside(name):
            params.append(param)
    if not params:
        raise ValueError(f"the modules {list(trainable)} hold no parameters: nothing to train")
    model.train()
    for name, module in model.named_modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            module.__dict__.pop("train", None)  # an earlier call's pin: this call decides anew
            if inside(name):
                module.train()
            else:
                module.train = _stay_in_eval.__get__(module)
                module.train()
    return torch.optim.SGD(params, lr=lr, momentum=0.9)
