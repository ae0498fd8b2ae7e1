# Corpus: every entry of the state dict averaged, the integer counter of batch norm included.
# %% ch03_ema_update points=0 feedback="integer buffer"
@torch.no_grad()
def ema_update(ema_model, model, decay):
    source = model.state_dict()
    for key, value in ema_model.state_dict().items():
        value.mul_(decay).add_(source[key], alpha=1 - decay)
    ema_model.requires_grad_(False)
