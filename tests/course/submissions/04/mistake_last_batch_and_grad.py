# Corpus: the last batch's loss returned; evaluation without no_grad.
# %% ch04_train_one_epoch points=0 feedback="last batch"
def train_one_epoch(model, loader, optimizer, loss_fn, device):
    model.train()
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
    return loss.item()
# %% ch04_evaluate points=0 feedback="torch.no_grad()"
def evaluate(model, loader, loss_fn, device):
    was_training = model.training
    model.eval()
    total, correct, count = 0.0, 0, 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        out = model(x)
        total += loss_fn(out, y).item() * len(y)
        correct += (out.argmax(1) == y).sum().item()
        count += len(y)
    model.train(was_training)
    return {"loss": total / count, "accuracy": correct / count}
