# Corpus: a correct checkpoint loaded with weights_only=False (through an alias of torch.load);
# the caller's state dict renamed in place (consume_prefix_in_state_dict_if_present).
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
# %% ch04_load_unwrapped points=0 feedback="was modified"
from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present


def load_unwrapped(model, state_dict):
    wanted = set(model.state_dict())
    while set(state_dict) != wanted:
        for prefix in ("module.", "_orig_mod."):
            if state_dict and all(k.startswith(prefix) for k in state_dict):
                consume_prefix_in_state_dict_if_present(state_dict, prefix)
                break
        else:
            break
    model.load_state_dict(state_dict)
