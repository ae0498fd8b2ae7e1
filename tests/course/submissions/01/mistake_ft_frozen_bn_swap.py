# Corpus: frozen BatchNorm2d layers swapped for torchvision's FrozenBatchNorm2d: right for one
# call, but a second call for gradual unfreezing cannot train them again (they have no parameters
# and no training mode left), so layer4 fine-tunes on frozen statistics.
# %% ch01_freeze_for_finetuning points=0 feedback="never changed in training"
from torchvision.ops.misc import FrozenBatchNorm2d


def freeze_for_finetuning(model, trainable, lr):
    def trains(name):
        return any(name == t or name.startswith(t + ".") for t in trainable)

    for name, module in list(model.named_modules()):
        if isinstance(module, nn.BatchNorm2d) and not trains(name):
            frozen = FrozenBatchNorm2d(module.num_features, eps=module.eps)
            frozen.weight.copy_(module.weight.detach())
            frozen.bias.copy_(module.bias.detach())
            frozen.running_mean.copy_(module.running_mean)
            frozen.running_var.copy_(module.running_var)
            parent, _, child = name.rpartition(".")
            setattr(model.get_submodule(parent) if parent else model, child, frozen)
    params = []
    for name, p in model.named_parameters():
        p.requires_grad_(trains(name))
        if trains(name):
            params.append(p)
    return torch.optim.SGD(params, lr=lr, momentum=0.9)
