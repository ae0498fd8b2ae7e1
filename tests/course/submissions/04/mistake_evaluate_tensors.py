# Corpus: loss and accuracy returned as 0-d tensors, not Python numbers.
# %% ch04_evaluate points=0 feedback="Python"
def evaluate(model, loader, loss_fn, device):
    mode = model.training
    model.eval()
    loss_sum, hits, count = 0.0, 0, 0
    with torch.inference_mode():
        for inputs, targets in loader:
            inputs, targets = inputs.to(device), targets.to(device)
            scores = model(inputs)
            loss_sum += loss_fn(scores, targets).item() * targets.numel()
            hits += int((scores.argmax(1) == targets).sum())
            count += targets.numel()
    model.train(mode)
    return {"loss": torch.tensor(loss_sum / count), "accuracy": torch.tensor(hits / count)}
