# Corpus: the random generator not restored; only "module." stripped, never "_orig_mod.".
# %% ch04_checkpoint points=0 feedback="random generator"
def save_checkpoint(path, model, optimizer, scheduler, epoch):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(), "epoch": epoch}, path)


def load_checkpoint(path, model, optimizer, scheduler):
    ckpt = torch.load(path, weights_only=True)
    model.load_state_dict(ckpt["model"])
    optimizer.load_state_dict(ckpt["optimizer"])
    scheduler.load_state_dict(ckpt["scheduler"])
    return ckpt["epoch"]
# %% ch04_strip_module_prefix points=0 feedback="got ['_orig_mod.fc.weight']"
def strip_module_prefix(state_dict):
    out = {}
    for key, value in state_dict.items():
        while key.startswith("module."):
            key = key[len("module."):]
        out[key] = value
    return out
