# Corpus: every sum detached, but the results returned as 0-d tensors.
# %% ch06_train_and_validate points=0 feedback="must be a Python float"
def train_and_validate(model, train_loader, val_loader, optimizer, loss_fn, device):
    model.train()
    total, seen = 0.0, 0
    for inputs, targets in train_loader:
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        total += loss.detach() * len(targets)
        seen += len(targets)
    model.eval()
    with torch.no_grad():
        outs, ys = [], []
        for inputs, targets in val_loader:
            outs.append(model(inputs.to(device)))
            ys.append(targets.to(device))
        outputs, targets = torch.cat(outs), torch.cat(ys)
        result = {"train_loss": total / seen, "val_loss": loss_fn(outputs, targets),
                  "val_accuracy": (outputs.argmax(1) == targets).float().mean()}
    model.train()
    return result
