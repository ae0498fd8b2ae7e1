# Corpus: training right, but the validation loss is the plain mean of the batch losses (the
# short last validation batch counts as much as the others).
# %% ch06_train_and_validate points=0 feedback="val_loss is the plain mean"
def train_and_validate(model, train_loader, val_loader, optimizer, loss_fn, device):
    model.train()
    running, count = 0.0, 0
    for inputs, targets in train_loader:
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        running += loss.item() * len(targets)
        count += len(targets)
    model.eval()
    losses, correct, total = [], 0, 0
    with torch.no_grad():
        for inputs, targets in val_loader:
            inputs, targets = inputs.to(device), targets.to(device)
            outputs = model(inputs)
            losses.append(loss_fn(outputs, targets).item())
            correct += (outputs.argmax(1) == targets).sum().item()
            total += len(targets)
    model.train()
    return {"train_loss": running / count, "val_loss": sum(losses) / len(losses),
            "val_accuracy": correct / total}
