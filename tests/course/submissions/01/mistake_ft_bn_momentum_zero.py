# Corpus: frozen BatchNorm layers given momentum=0 instead of being kept in eval mode: their
# running mean and variance stay put, but in training mode they normalise with each batch's own
# statistics (and count the batches), so the head trains on features the pretrained model never
# produced.
# %% ch01_freeze_for_finetuning points=0 feedback="normalise with their running statistics"
def freeze_for_finetuning(model, trainable, lr):
    def trains(name):
        return any(name == t or name.startswith(t + ".") for t in trainable)

    for name, p in model.named_parameters():
        p.requires_grad_(trains(name))
    for name, m in model.named_modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm) and not trains(name):
            m.momentum = 0.0  # the running statistics no longer move
    return torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=lr, momentum=0.9)
