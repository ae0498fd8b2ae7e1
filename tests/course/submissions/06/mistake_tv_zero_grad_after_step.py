# Corpus: train_and_validate that clears gradients after each step instead of before: the same
# epoch as long as the model arrives with no gradients, but a model that arrives with .grad set
# (after a dry run's backward) has them applied by the first step. The hidden models arrive so.
# %% ch06_train_and_validate points=0 feedback="gradients are cleared after each step instead of before it"
def train_and_validate(model, train_loader, val_loader, optimizer, loss_fn, device):
    model.train()
    running, count = 0.0, 0
    for inputs, targets in train_loader:
        inputs, targets = inputs.to(device), targets.to(device)
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()  # tidy up for the next batch
        running += loss.item() * targets.size(0)
        count += targets.size(0)
    model.eval()
    val_loss, correct, total = 0.0, 0, 0
    with torch.no_grad():
        for inputs, targets in val_loader:
            inputs, targets = inputs.to(device), targets.to(device)
            outputs = model(inputs)
            val_loss += loss_fn(outputs, targets).item() * targets.size(0)
            correct += (outputs.argmax(1) == targets).sum().item()
            total += targets.size(0)
    model.train()
    return {"train_loss": running / count, "val_loss": val_loss / total,
            "val_accuracy": correct / total}
