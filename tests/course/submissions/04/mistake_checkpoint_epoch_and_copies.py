# Corpus: the next epoch returned instead of the saved one; NumPy's generator state saved too
# (another file); cloned tensors returned by the prefix stripper.
# %% ch04_checkpoint points=0 feedback="returned 2 for a checkpoint saved with epoch=1"
def save_checkpoint(path, model, optimizer, scheduler, epoch):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(), "epoch": epoch,
                "rng": torch.get_rng_state()}, path)


def load_checkpoint(path, model, optimizer, scheduler):
    ckpt = torch.load(path, weights_only=True)
    model.load_state_dict(ckpt["model"])
    optimizer.load_state_dict(ckpt["optimizer"])
    scheduler.load_state_dict(ckpt["scheduler"])
    torch.set_rng_state(ckpt["rng"])
    return ckpt["epoch"] + 1
# %% ch04_strip_module_prefix points=0 feedback="the very same tensor"
def strip_module_prefix(state_dict):
    out = {}
    for key, value in state_dict.items():
        while key.startswith(("module.", "_orig_mod.")):
            key = key.split(".", 1)[1]
        out[key] = value.clone()
    return out
