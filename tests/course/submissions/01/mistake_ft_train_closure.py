# Corpus: model.train replaced by a closure over the model: it works on the model, and it survives
# a second call, but copy.deepcopy gives the copy the same closure, so the copy's train() and eval()
# switch the original's modes and the copy validates in training mode.
# %% ch01_freeze_for_finetuning points=0 feedback="copy.deepcopy"
def freeze_for_finetuning(model, trainable, lr):
    def trains(name):
        return any(name == t or name.startswith(t + ".") for t in trainable)

    for name, p in model.named_parameters():
        p.requires_grad_(trains(name))
    frozen = [
        m for name, m in model.named_modules()
        if isinstance(m, nn.modules.batchnorm._BatchNorm) and not trains(name)
    ]

    def train(mode=True):
        nn.Module.train(model, mode)
        for m in frozen:
            m.eval()
        return model

    model.train = train
    model.train()
    return torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=lr, momentum=0.9)
