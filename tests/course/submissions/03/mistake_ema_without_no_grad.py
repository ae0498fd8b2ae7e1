# Corpus: the guide's in-place EMA on a deep copy, without torch.no_grad(): the leaf error.
# %% ch03_ema_update points=0 feedback="leaf Variable"
def ema_update(ema_model, model, decay):
    for e, p in zip(ema_model.parameters(), model.parameters()):
        e.mul_(decay).add_((1 - decay) * p)
    for e, b in zip(ema_model.buffers(), model.buffers()):
        e.copy_(b)
    ema_model.requires_grad_(False)
