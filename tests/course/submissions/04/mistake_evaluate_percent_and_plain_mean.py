# Corpus: accuracy in percent; the validation loss as a plain average of batch losses.
# %% ch04_evaluate points=0 feedback="percentage"
def evaluate(model, loader, loss_fn, device):
    was = model.training
    model.eval()
    total, correct, count = 0.0, 0, 0
    with torch.no_grad():
        for x, y in loader:
            out = model(x.to(device))
            total += loss_fn(out, y.to(device)).item() * len(y)
            correct += (out.argmax(1) == y.to(device)).sum().item()
            count += len(y)
    model.train(was)
    return {"loss": total / count, "accuracy": 100.0 * correct / count}
# %% ch04_checkpoint points=0 feedback="optimizer state"
def save_checkpoint(path, model, optimizer, scheduler, epoch):
    torch.save({"model": model.state_dict(), "scheduler": scheduler.state_dict(),
                "epoch": epoch, "rng": torch.get_rng_state()}, path)


def load_checkpoint(path, model, optimizer, scheduler):
    ckpt = torch.load(path, weights_only=True)
    model.load_state_dict(ckpt["model"])
    scheduler.load_state_dict(ckpt["scheduler"])
    torch.set_rng_state(ckpt["rng"])
    return ckpt["epoch"]
