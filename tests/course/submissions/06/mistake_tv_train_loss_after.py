# Corpus: the training loss measured again after the epoch, in a second pass under no_grad,
# instead of each batch's loss as computed during its step.
# %% ch06_train_and_validate points=0 feedback="train_loss differs from the reference"
def train_and_validate(model, train_loader, val_loader, optimizer, loss_fn, device):
    model.train()
    seen = []  # the batches, kept for the second pass
    for inputs, targets in train_loader:
        seen.append((inputs, targets))
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        loss_fn(model(inputs), targets).backward()
        optimizer.step()
    model.eval()

    def measure(loader):
        loss_sum, correct, n = 0.0, 0, 0
        with torch.no_grad():
            for inputs, targets in loader:
                inputs, targets = inputs.to(device), targets.to(device)
                outputs = model(inputs)
                loss_sum += loss_fn(outputs, targets).item() * len(targets)
                correct += (outputs.argmax(1) == targets).sum().item()
                n += len(targets)
        return loss_sum / n, correct / n

    train_loss, _ = measure(seen)
    val_loss, val_accuracy = measure(val_loader)
    model.train()
    return {"train_loss": train_loss, "val_loss": val_loss, "val_accuracy": val_accuracy}
