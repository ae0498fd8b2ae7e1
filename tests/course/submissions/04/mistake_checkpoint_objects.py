# Corpus: the model, optimizer and scheduler objects pickled whole (weights_only refuses them);
# one pass over the prefixes, so stacked wrappers keep a prefix.
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
# %% ch04_strip_module_prefix points=0 feedback="should become 'fc.weight', got ['module.fc.weight']"
def strip_module_prefix(state_dict):
    out = {}
    for key, value in state_dict.items():
        for prefix in ("module.", "_orig_mod."):
            if key.startswith(prefix):
                key = key[len(prefix):]
        out[key] = value
    return out
