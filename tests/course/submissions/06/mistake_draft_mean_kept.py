# Corpus: draft_epoch with the leak and the mode fixed (eval for validation, train again after),
# but train_loss still divided by the number of batches: the short last batch counts as a full one.
# %% ch06_train_and_validate points=0 feedback="train_loss is the plain mean"
def train_and_validate(model, train_loader, val_loader, optimizer, loss_fn, device):
    model.train()
    total = 0.0
    for step, (inputs, targets) in enumerate(train_loader, start=1):
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        total += loss.item()
    model.eval()
    val_loss, correct, count = 0.0, 0, 0
    with torch.no_grad():
        for inputs, targets in val_loader:
            inputs, targets = inputs.to(device), targets.to(device)
            outputs = model(inputs)
            val_loss += loss_fn(outputs, targets).item() * len(targets)
            correct += (outputs.argmax(dim=1) == targets).sum().item()
            count += len(targets)
    model.train()
    return {"train_loss": total / step, "val_loss": val_loss / count,
            "val_accuracy": correct / count}
