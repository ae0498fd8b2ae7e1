# Corpus: the gradients never cleared in the training loop: every step adds the earlier
# batches' gradients in.
# %% ch06_train_and_validate points=0 feedback="gradients cleared before each backward"
def train_and_validate(model, train_loader, val_loader, optimizer, loss_fn, device):
    model.train()
    running, count = 0.0, 0
    for inputs, targets in train_loader:
        inputs, targets = inputs.to(device), targets.to(device)
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        running += loss.item() * len(targets)
        count += len(targets)
    model.eval()
    val_loss, correct, total = 0.0, 0, 0
    with torch.no_grad():
        for inputs, targets in val_loader:
            inputs, targets = inputs.to(device), targets.to(device)
            outputs = model(inputs)
            val_loss += loss_fn(outputs, targets).item() * len(targets)
            correct += (outputs.argmax(1) == targets).sum().item()
            total += len(targets)
    model.train()
    return {"train_loss": running / count, "val_loss": val_loss / total,
            "val_accuracy": correct / total}
