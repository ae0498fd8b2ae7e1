# Corpus: everything right except the accuracy, overwritten at every validation batch: only the
# last batch's accuracy is returned.
# %% ch06_train_and_validate points=0 feedback="last batch's value"
def train_and_validate(model, train_loader, val_loader, optimizer, loss_fn, device):
    model.train()
    total, seen = 0.0, 0
    for inputs, targets in train_loader:
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(targets)
        seen += len(targets)
    model.eval()
    val_total, count = 0.0, 0
    with torch.no_grad():
        for inputs, targets in val_loader:
            inputs, targets = inputs.to(device), targets.to(device)
            outputs = model(inputs)
            val_total += loss_fn(outputs, targets).item() * len(targets)
            count += len(targets)
            accuracy = (outputs.argmax(dim=1) == targets).float().mean().item()
    model.train()
    return {"train_loss": total / seen, "val_loss": val_total / count, "val_accuracy": accuracy}
