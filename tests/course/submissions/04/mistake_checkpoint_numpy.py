# Corpus: NumPy's generator state stored in the checkpoint (an array: weights_only refuses it).
# %% ch04_checkpoint points=0 feedback="NumPy"
def save_checkpoint(path, model, optimizer, scheduler, epoch):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(), "epoch": epoch,
                "rng": torch.get_rng_state(), "np_rng": np.random.get_state()}, path)


def load_checkpoint(path, model, optimizer, scheduler):
    ckpt = torch.load(path, weights_only=False)
    model.load_state_dict(ckpt["model"])
    optimizer.load_state_dict(ckpt["optimizer"])
    scheduler.load_state_dict(ckpt["scheduler"])
    torch.set_rng_state(ckpt["rng"])
    np.random.set_state(ckpt["np_rng"])
    return ckpt["epoch"]
