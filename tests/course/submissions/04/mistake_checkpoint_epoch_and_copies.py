# Corpus: the next epoch returned instead of the saved one; NumPy's generator state saved too
# (another file); a state dict that does not fit refused without naming its keys.
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
# %% ch04_load_unwrapped points=0 feedback="should name ['head.bias', 'extra.weight']"
def load_unwrapped(model, state_dict):
    wanted = set(model.state_dict())
    sd = dict(state_dict)
    while set(sd) != wanted:
        shared = [p for p in ("module.", "_orig_mod.") if sd and all(k.startswith(p) for k in sd)]
        if not shared:
            raise ValueError("this checkpoint was saved from a different model")
        sd = {k[len(shared[0]):]: v for k, v in sd.items()}
    model.load_state_dict(sd)
