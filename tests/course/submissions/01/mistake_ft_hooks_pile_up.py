# Corpus: frozen BatchNorm layers forced to eval by forward pre-hooks that are never removed: a
# second call for gradual unfreezing leaves the first call's hooks on layer4's BatchNorm layers,
# which keep normalising with running statistics they never update.
# %% ch01_freeze_for_finetuning points=0 feedback="a second call decides each BatchNorm layer anew"
def _force_eval(module, args):
    module.training = False


def freeze_for_finetuning(model, trainable, lr):
    def trains(name):
        return any(name == t or name.startswith(t + ".") for t in trainable)

    params = [p for name, p in model.named_parameters() if trains(name)]
    model.requires_grad_(False)
    for p in params:
        p.requires_grad_(True)
    for name, m in model.named_modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm) and not trains(name):
            m.register_forward_pre_hook(_force_eval)
    return torch.optim.SGD(params, lr=lr, momentum=0.9)
