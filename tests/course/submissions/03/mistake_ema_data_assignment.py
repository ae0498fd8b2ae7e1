# Corpus: the old .data assignment: right values, but in new tensors, so an earlier state_dict()
# keeps the old average.
# %% ch03_ema_update points=0 feedback="instead of updated in place"
def ema_update(ema_model, model, decay):
    for e, p in zip(ema_model.parameters(), model.parameters()):
        e.requires_grad_(False)
        e.data = decay * e.data + (1 - decay) * p.data
    for e, b in zip(ema_model.buffers(), model.buffers()):
        e.data = b.data.clone()
