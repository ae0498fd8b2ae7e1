# Corpus: evaluate keeps the model's own flag and restores it with model.train(flag), in a finally: a model whose parts are in different modes (a frozen backbone) comes back with every part in one mode.
# %% ch04_evaluate points=0 feedback="every module must leave in the mode it arrived in"
def evaluate(model, loader, loss_fn, device):
    was_training = model.training
    model.eval()
    loss_sum, hits, count = 0.0, 0, 0
    try:
        with torch.no_grad():
            for inputs, targets in loader:
                inputs, targets = inputs.to(device), targets.to(device)
                scores = model(inputs)
                loss_sum += loss_fn(scores, targets).item() * len(targets)
                hits += (scores.argmax(dim=1) == targets).sum().item()
                count += len(targets)
    finally:
        model.train(was_training)
    return {"loss": loss_sum / count, "accuracy": hits / count}
