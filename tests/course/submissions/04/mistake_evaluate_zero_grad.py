# Corpus: evaluate starts with model.zero_grad() to be clean: gradients the caller had are gone.
# %% ch04_evaluate points=0 feedback="gradients"
def evaluate(model, loader, loss_fn, device):
    mode = model.training
    model.zero_grad()
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
    return {"loss": loss_sum / count, "accuracy": hits / count}
