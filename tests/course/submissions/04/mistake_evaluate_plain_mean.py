# Corpus: the validation loss as a plain average of batch losses; argmax over the batch dimension.
# %% ch04_evaluate points=0 feedback="plain average"
def evaluate(model, loader, loss_fn, device):
    was = model.training
    model.eval()
    losses, correct, count = [], 0, 0
    with torch.no_grad():
        for x, y in loader:
            out = model(x.to(device))
            losses.append(loss_fn(out, y.to(device)).item())
            correct += (out.argmax(1) == y.to(device)).sum().item()
            count += len(y)
    model.train(was)
    return {"loss": sum(losses) / len(losses), "accuracy": correct / count}
