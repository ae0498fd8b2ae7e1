# Corpus: floating-point buffers averaged like the weights (integers copied).
# %% ch03_ema_update points=0 feedback="copied, not averaged"
@torch.no_grad()
def ema_update(ema_model, model, decay):
    for e, p in zip(ema_model.parameters(), model.parameters()):
        e.requires_grad_(False)
        e.lerp_(p, 1 - decay)
    for e, b in zip(ema_model.buffers(), model.buffers()):
        if e.is_floating_point():
            e.lerp_(b, 1 - decay)
        else:
            e.copy_(b)
