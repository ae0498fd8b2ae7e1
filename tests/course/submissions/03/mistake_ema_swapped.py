# Corpus: decay and 1 - decay swapped: the average follows the model almost at once.
# %% ch03_ema_update points=0 feedback="decay=1.0"
@torch.no_grad()
def ema_update(ema_model, model, decay):
    for e, p in zip(ema_model.parameters(), model.parameters()):
        e.requires_grad_(False)
        e.mul_(1 - decay).add_(p, alpha=decay)
    for e, b in zip(ema_model.buffers(), model.buffers()):
        e.copy_(b)
