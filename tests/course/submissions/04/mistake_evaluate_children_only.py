# Corpus: evaluate restores the mode of the model and of its direct children only: a part deeper down (dropout inside the head) is set to its parent's mode.
# %% ch04_evaluate points=0 feedback="every module must leave in the mode it arrived in"
def evaluate(model, loader, loss_fn, device):
    top = model.training
    parts = {name: child.training for name, child in model.named_children()}
    model.eval()
    loss_sum, hits, count = 0.0, 0, 0
    try:
        with torch.inference_mode():
            for inputs, targets in loader:
                inputs, targets = inputs.to(device), targets.to(device)
                scores = model(inputs)
                loss_sum += loss_fn(scores, targets).item() * len(targets)
                hits += (scores.argmax(dim=1) == targets).sum().item()
                count += len(targets)
    finally:
        model.train(top)
        for name, child in model.named_children():
            child.train(parts[name])
    return {"loss": loss_sum / count, "accuracy": hits / count}
