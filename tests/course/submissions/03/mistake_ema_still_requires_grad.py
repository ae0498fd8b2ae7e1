# Corpus: a correct average under no_grad, but ema_model's parameters keep requiring grad.
# %% ch03_ema_update points=0 feedback="still require grad"
def ema_update(ema_model, model, decay):
    with torch.no_grad():
        for e, p in zip(ema_model.parameters(), model.parameters()):
            e.mul_(decay).add_(p, alpha=1 - decay)
        for e, b in zip(ema_model.buffers(), model.buffers()):
            e.copy_(b)
