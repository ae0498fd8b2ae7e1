"""Tests for companion.finetune.freeze_for_finetuning."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

from companion.finetune import freeze_for_finetuning

# The model is torchvision's ResNet, which the torch 2.13 CPU environment does not have.
pytestmark = pytest.mark.requires_torchvision


def _model() -> nn.Module:
    from torchvision.models.resnet import BasicBlock, ResNet

    torch.manual_seed(0)
    return ResNet(BasicBlock, [1, 1, 1, 1], num_classes=3)


def _train(model, optimizer, epochs=2):
    torch.manual_seed(1)
    for _ in range(epochs):
        model.train()  # what a training loop does at the start of every epoch
        optimizer.zero_grad()
        inputs, targets = torch.randn(4, 3, 32, 32) + 1, torch.randint(0, 3, (4,))
        nn.functional.cross_entropy(model(inputs), targets).backward()
        optimizer.step()


def test_only_the_named_modules_train_and_frozen_batch_norm_keeps_its_statistics():
    model = _model()
    before = copy.deepcopy(model.state_dict())
    optimizer = freeze_for_finetuning(model, ["layer4", "fc"], lr=0.1)
    assert isinstance(optimizer, torch.optim.SGD) and optimizer.defaults["momentum"] == 0.9
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    assert trainable == {n for n, _ in model.named_parameters() if n.startswith(("layer4.", "fc."))}
    assert {id(p) for g in optimizer.param_groups for p in g["params"]} == {
        id(p) for p in model.parameters() if p.requires_grad
    }
    _train(model, optimizer)
    after = model.state_dict()
    for key, value in before.items():
        if key.startswith(("layer4.", "fc.")):
            if not key.endswith("num_batches_tracked"):
                assert not torch.equal(after[key], value), f"{key} did not train"
        else:
            assert torch.equal(after[key], value), f"frozen {key} changed"
    assert all(p.grad is None for n, p in model.named_parameters() if n not in trainable)


def test_names_are_module_names_not_substrings():
    model = _model()
    freeze_for_finetuning(model, ["conv1", "fc"], lr=0.1)
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    assert trainable == {"conv1.weight", "fc.weight", "fc.bias"}


def test_trainable_batch_norm_keeps_training_mode():
    model = _model()
    freeze_for_finetuning(model, ["bn1", "fc"], lr=0.1)
    model.train()
    assert model.bn1.training and not model.layer1[0].bn1.training
    model.eval()
    assert not model.bn1.training


@pytest.mark.parametrize(
    ("trainable", "error", "words"),
    [("fc", TypeError, "write ['fc']"), (["head"], ValueError, "not submodules"),
     (["relu"], ValueError, "no parameters")],
)  # fmt: skip
def test_bad_arguments_name_the_problem(trainable, error, words):
    with pytest.raises(error, match=None) as info:
        freeze_for_finetuning(_model(), trainable, lr=0.1)
    assert words in str(info.value)


def test_a_second_call_unfreezes_what_the_new_names_cover():
    model = _model()
    freeze_for_finetuning(model, ["fc"], lr=0.1)
    optimizer = freeze_for_finetuning(model, ["layer4", "fc"], lr=0.1)  # gradual unfreezing
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    assert trainable == {n for n, _ in model.named_parameters() if n.startswith(("layer4.", "fc."))}
    assert len(optimizer.param_groups[0]["params"]) == len(trainable)
    model.train()
    assert model.layer4[0].bn1.training and model.layer4[0].downsample[1].training
    assert not model.bn1.training and not model.layer3[0].bn2.training
    before = model.layer4[0].bn1.running_mean.clone()
    _train(model, optimizer, epochs=1)
    assert not torch.equal(model.layer4[0].bn1.running_mean, before)


def test_a_deep_copy_keeps_its_own_layers_frozen():
    model = _model()
    freeze_for_finetuning(model, ["layer4", "fc"], lr=0.1)
    twin = copy.deepcopy(model)
    before = copy.deepcopy(twin.state_dict())
    twin.train()
    assert not twin.bn1.training and twin.layer4[0].bn1.training
    twin.eval()
    assert not twin.layer4[0].bn1.training
    params = [p for p in twin.parameters() if p.requires_grad]
    _train(twin, torch.optim.SGD(params, lr=0.1, momentum=0.9), epochs=1)
    assert torch.equal(twin.bn1.running_mean, before["bn1.running_mean"])
    assert not torch.equal(twin.layer4[0].bn1.running_mean, before["layer4.0.bn1.running_mean"])
