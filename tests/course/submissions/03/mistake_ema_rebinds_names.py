# Corpus: the guide's out-of-place formula: a new tensor bound to a loop variable changes nothing.
# %% ch03_ema_update points=0 feedback="keeps none of the old average"
def ema_update(ema_model, model, decay):
    with torch.no_grad():
        for e, p in zip(ema_model.parameters(), model.parameters()):
            e = decay * e + (1 - decay) * p
        for e, b in zip(ema_model.buffers(), model.buffers()):
            e.copy_(b)
    ema_model.requires_grad_(False)
