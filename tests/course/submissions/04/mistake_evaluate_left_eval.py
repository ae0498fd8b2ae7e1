# Corpus: evaluate leaves the model in eval mode; accuracy as a percentage is another file's.
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
# %% ch04_strip_module_prefix points=0 feedback="got ['ule.fc.weight']"
def strip_module_prefix(state_dict):
    return {k.lstrip("module.").lstrip("_orig_mod."): v for k, v in state_dict.items()}
