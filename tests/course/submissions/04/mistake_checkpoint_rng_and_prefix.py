# Corpus: the random generator not restored; only "module." peeled, never torch.compile's
# "_orig_mod.".
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
# %% ch04_load_unwrapped points=0 feedback="torch.compile puts"
def load_unwrapped(model, state_dict):
    wanted = set(model.state_dict())
    sd = dict(state_dict)
    while set(sd) != wanted and sd and all(k.startswith("module.") for k in sd):
        sd = {k[len("module."):]: v for k, v in sd.items()}
    model.load_state_dict(sd)
