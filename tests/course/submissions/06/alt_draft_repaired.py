# Corpus: draft_epoch repaired in place, keeping its shape: enumerate kept, a sample count beside
# the step count, the sums as floats, eval around validation and train again before returning.
# %% ch06_train_and_validate points=5 feedback=passed
def train_and_validate(model, train_loader, val_loader, optimizer, loss_fn, device):
    model.train()
    total, samples = 0.0, 0
    for step, (inputs, targets) in enumerate(train_loader, start=1):
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        total += float(loss) * len(targets)
        samples += len(targets)
    model.eval()
    try:
        val_loss, correct, count = 0.0, 0, 0
        with torch.no_grad():
            for inputs, targets in val_loader:
                inputs, targets = inputs.to(device), targets.to(device)
                outputs = model(inputs)  # (B, 10)
                val_loss += loss_fn(outputs, targets).item() * len(targets)
                correct += int((outputs.argmax(dim=1) == targets).sum())
                count += len(targets)
    finally:
        model.train()
    return {"train_loss": total / samples, "val_loss": val_loss / count,
            "val_accuracy": correct / count}
