# Corpus: evaluate restores every module's mode, but only after a loop that finished: a batch that raises (a corrupt sample, a Ctrl-C) leaves the model in eval mode.
# %% ch04_evaluate points=0 feedback="also when the loop is left by an exception"
def evaluate(model, loader, loss_fn, device):
    modes = {m: m.training for m in model.modules()}
    model.eval()
    loss_sum, hits, count = 0.0, 0, 0
    with torch.no_grad():
        for inputs, targets in loader:
            inputs, targets = inputs.to(device), targets.to(device)
            scores = model(inputs)
            loss_sum += loss_fn(scores, targets).item() * len(targets)
            hits += (scores.argmax(dim=1) == targets).sum().item()
            count += len(targets)
    for m, mode in modes.items():
        m.training = mode
    return {"loss": loss_sum / count, "accuracy": hits / count}
