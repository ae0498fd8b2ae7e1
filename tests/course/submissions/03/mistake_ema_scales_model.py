# Corpus: the right average, but built with an in-place multiply on the model's own weights:
# ema_model is right and model is scaled by 1 - decay.
# %% ch03_ema_update points=0 feedback="only ema_model may change"
@torch.no_grad()
def ema_update(ema_model, model, decay):
    current = dict(model.named_parameters())
    for name, e in ema_model.named_parameters():
        e.requires_grad_(False)
        e.mul_(decay).add_(current[name].mul_(1 - decay))
    buffers = dict(model.named_buffers())
    for name, b in ema_model.named_buffers():
        b.copy_(buffers[name])
