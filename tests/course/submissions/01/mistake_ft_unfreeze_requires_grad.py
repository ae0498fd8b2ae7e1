# Corpus: only ever switches requires_grad off: on a fresh model that is all freezing needs, but a
# second call for gradual unfreezing leaves what the first call froze frozen (its optimizer holds
# parameters that never get a gradient).
# %% ch01_freeze_for_finetuning points=0 feedback="parameters of those modules stayed frozen"
def _pinned(module, mode=True):
    return nn.Module.train(module, False)


def freeze_for_finetuning(model, trainable, lr):
    def trains(name):
        return any(name == t or name.startswith(t + ".") for t in trainable)

    params = []
    for name, p in model.named_parameters():
        if trains(name):
            params.append(p)
        else:
            p.requires_grad_(False)
    for name, m in model.named_modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            m.__dict__.pop("train", None)
            if not trains(name):
                m.train = _pinned.__get__(m)
                m.eval()
    return torch.optim.SGD(params, lr=lr, momentum=0.9)
