# Corpus: the means divided by len(loader.dataset), as DataLoader code often does: the hidden
# loaders are plain iterables.
# %% ch06_train_and_validate points=0 feedback="dataset"
def train_and_validate(model, train_loader, val_loader, optimizer, loss_fn, device):
    model.train()
    running = 0.0
    for inputs, targets in train_loader:
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        running += loss.item() * len(targets)
    model.eval()
    val_loss, correct = 0.0, 0
    with torch.no_grad():
        for inputs, targets in val_loader:
            inputs, targets = inputs.to(device), targets.to(device)
            outputs = model(inputs)
            val_loss += loss_fn(outputs, targets).item() * len(targets)
            correct += (outputs.argmax(1) == targets).sum().item()
    model.train()
    n_train, n_val = len(train_loader.dataset), len(val_loader.dataset)
    return {"train_loss": running / n_train, "val_loss": val_loss / n_val,
            "val_accuracy": correct / n_val}
