# Corpus: a 0-d tensor returned instead of a number; evaluate that always hands back train mode.
# %% ch04_train_one_epoch points=0 feedback=".item()"
def train_one_epoch(model, loader, optimizer, loss_fn, device):
    model.train()
    total, count = 0.0, 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        total = total + loss.detach() * len(y)
        count += len(y)
    return total / count
# %% ch04_evaluate points=0 feedback="arrived in eval mode and left in train mode"
def evaluate(model, loader, loss_fn, device):
    model.eval()
    total, correct, count = 0.0, 0, 0
    with torch.no_grad():
        for x, y in loader:
            out = model(x.to(device))
            total += loss_fn(out, y.to(device)).item() * len(y)
            correct += (out.argmax(1) == y.to(device)).sum().item()
            count += len(y)
    model.train()
    return {"loss": total / count, "accuracy": correct / count}
