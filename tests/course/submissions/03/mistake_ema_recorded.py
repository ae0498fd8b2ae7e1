# Corpus: requires_grad switched off first, so no leaf error, but the update is still recorded by
# autograd (the model's parameters require grad).
# %% ch03_ema_update points=0 feedback="autograd recorded"
def ema_update(ema_model, model, decay):
    ema_model.requires_grad_(False)
    for e, p in zip(ema_model.parameters(), model.parameters()):
        e.mul_(decay).add_(p, alpha=1 - decay)
    for e, b in zip(ema_model.buffers(), model.buffers()):
        e.copy_(b)
