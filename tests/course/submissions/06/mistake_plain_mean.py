# Corpus: the plain mean of the batch losses (the smaller last batch counts as much as the others).
# %% ch06_train_and_validate points=0 feedback="each batch weighted by its size"
def train_and_validate(model, train_loader, val_loader, optimizer, loss_fn, device):
    model.train()
    losses = []
    for inputs, targets in train_loader:
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    val_loss, correct, count = 0.0, 0, 0
    with torch.no_grad():
        for inputs, targets in val_loader:
            inputs, targets = inputs.to(device), targets.to(device)
            outputs = model(inputs)
            val_loss += loss_fn(outputs, targets).item() * len(targets)
            correct += (outputs.argmax(1) == targets).sum().item()
            count += len(targets)
    model.train()
    return {"train_loss": sum(losses) / len(losses), "val_loss": val_loss / count,
            "val_accuracy": correct / count}
