# Corpus: evaluate leaves the model in eval mode (accuracy as a percentage is another file's); a
# state dict that does not fit loaded silently with strict=False.
# %% ch04_evaluate points=0 feedback="was left in eval mode"
def evaluate(model, loader, loss_fn, device):
    model.eval()
    total, correct, count = 0.0, 0, 0
    with torch.no_grad():
        for x, y in loader:
            out = model(x.to(device))
            total += loss_fn(out, y.to(device)).item() * len(y)
            correct += (out.argmax(1) == y.to(device)).sum().item()
            count += len(y)
    return {"loss": total / count, "accuracy": correct / count}
# %% ch04_load_unwrapped points=0 feedback="loaded without an error"
def load_unwrapped(model, state_dict):
    wanted = set(model.state_dict())
    sd = dict(state_dict)
    while set(sd) != wanted:
        shared = [p for p in ("module.", "_orig_mod.") if sd and all(k.startswith(p) for k in sd)]
        if not shared:
            break
        sd = {k[len(shared[0]):]: v for k, v in sd.items()}
    model.load_state_dict(sd, strict=False)  # load what matches, skip the rest
