# Corpus: only the parameters are updated: batch norm's running statistics stay stale.
# %% ch03_ema_update points=0 feedback="buffers were not updated"
@torch.no_grad()
def ema_update(ema_model, model, decay):
    for e, p in zip(ema_model.parameters(), model.parameters()):
        e.requires_grad = False
        e.copy_(decay * e + (1 - decay) * p)
