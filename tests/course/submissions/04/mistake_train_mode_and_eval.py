# Corpus: train_one_epoch never switches to train mode; evaluate never switches to eval mode.
# %% ch04_train_one_epoch points=0 feedback="model.train()"
def train_one_epoch(model, loader, optimizer, loss_fn, device):
    total, count = 0.0, 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(y)
        count += len(y)
    return total / count
# %% ch04_evaluate points=0 feedback="model.eval()"
def evaluate(model, loader, loss_fn, device):
    total, correct, count = 0.0, 0, 0
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            out = model(x)
            total += loss_fn(out, y).item() * len(y)
            correct += (out.argmax(1) == y).sum().item()
            count += len(y)
    return {"loss": total / count, "accuracy": correct / count}
