# Corpus: draft_epoch with only the obvious leak fixed (the loss summed as .item()): still the
# plain mean over batches, and validation still in train mode. Both listed in the feedback.
# %% ch06_train_and_validate points=0 feedback="validation ran in train mode"
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
    val_loss, correct, count = 0.0, 0, 0
    with torch.no_grad():
        for inputs, targets in val_loader:
            inputs, targets = inputs.to(device), targets.to(device)
            outputs = model(inputs)  # (B, 10)
            val_loss += loss_fn(outputs, targets).item() * len(targets)
            correct += (outputs.argmax(dim=1) == targets).sum().item()
            count += len(targets)
    return {"train_loss": total / step, "val_loss": val_loss / count,
            "val_accuracy": correct / count}
