# Corpus: draft_epoch with the leak fixed, train_loss weighted per sample, model.eval() added
# before validation, and nothing after it: the model comes back in eval mode.
# %% ch06_train_and_validate points=0 feedback="left in eval mode"
def train_and_validate(model, train_loader, val_loader, optimizer, loss_fn, device):
    model.train()
    total, samples = 0.0, 0
    for inputs, targets in train_loader:
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        total += loss.item() * targets.shape[0]
        samples += targets.shape[0]
    model.eval()
    val_loss, correct, count = 0.0, 0, 0
    with torch.no_grad():
        for inputs, targets in val_loader:
            inputs, targets = inputs.to(device), targets.to(device)
            outputs = model(inputs)
            val_loss += loss_fn(outputs, targets).item() * len(targets)
            correct += (outputs.argmax(dim=1) == targets).sum().item()
            count += len(targets)
    return {"train_loss": total / samples, "val_loss": val_loss / count,
            "val_accuracy": correct / count}
