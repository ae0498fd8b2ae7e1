# Corpus: the model, optimizer and scheduler objects pickled whole (weights_only refuses them);
# one pass over the wrapper prefixes, so stacked wrappers keep a prefix.
# %% ch04_checkpoint points=0 feedback="weights_only=True"
def save_checkpoint(path, model, optimizer, scheduler, epoch):
    torch.save({"model": model, "optimizer": optimizer, "scheduler": scheduler, "epoch": epoch,
                "rng": torch.get_rng_state()}, path)


def load_checkpoint(path, model, optimizer, scheduler):
    ckpt = torch.load(path, weights_only=False)
    model.load_state_dict(ckpt["model"].state_dict())
    optimizer.load_state_dict(ckpt["optimizer"].state_dict())
    scheduler.load_state_dict(ckpt["scheduler"].state_dict())
    torch.set_rng_state(ckpt["rng"])
    return ckpt["epoch"]
# %% ch04_load_unwrapped points=0 feedback="wrappers nest, in either order"
def load_unwrapped(model, state_dict):
    wanted = set(model.state_dict())
    sd = dict(state_dict)
    for prefix in ("module.", "_orig_mod."):
        if set(sd) != wanted and all(k.startswith(prefix) for k in sd):
            sd = {k[len(prefix):]: v for k, v in sd.items()}
    model.load_state_dict(sd)
