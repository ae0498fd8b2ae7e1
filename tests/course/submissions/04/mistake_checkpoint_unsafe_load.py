# Corpus: a correct checkpoint loaded with weights_only=False (through an alias of torch.load);
# the input state dict emptied and refilled in place.
# %% ch04_checkpoint points=0 feedback="weights_only=False"
from torch import load as torch_load


def save_checkpoint(path, model, optimizer, scheduler, epoch):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(), "epoch": epoch,
                "rng": torch.get_rng_state()}, path)


def load_checkpoint(path, model, optimizer, scheduler):
    ckpt = torch_load(path, weights_only=False)
    model.load_state_dict(ckpt["model"])
    optimizer.load_state_dict(ckpt["optimizer"])
    scheduler.load_state_dict(ckpt["scheduler"])
    torch.set_rng_state(ckpt["rng"])
    return ckpt["epoch"]
# %% ch04_strip_module_prefix points=0 feedback="modified"
def strip_module_prefix(state_dict):
    items = list(state_dict.items())
    state_dict.clear()
    for key, value in items:
        while key.startswith(("module.", "_orig_mod.")):
            key = key.split(".", 1)[1]
        state_dict[key] = value
    return state_dict
