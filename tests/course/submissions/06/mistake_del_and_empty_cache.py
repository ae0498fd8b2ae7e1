# Corpus: the fix that is not one: del and torch.cuda.empty_cache() after each step, while the
# running sum still holds every graph.
# %% ch06_train_and_validate points=0 feedback="LEAK"
def train_and_validate(model, train_loader, val_loader, optimizer, loss_fn, device):
    model.train()
    total, seen = 0.0, 0
    for inputs, targets in train_loader:
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        outputs = model(inputs)
        loss = loss_fn(outputs, targets)
        loss.backward()
        optimizer.step()
        total += loss * len(targets)
        seen += len(targets)
        del outputs, loss
        torch.cuda.empty_cache()
    model.eval()
    val_loss, correct, count = 0.0, 0, 0
    with torch.no_grad():
        for inputs, targets in val_loader:
            outputs = model(inputs.to(device))
            targets = targets.to(device)
            val_loss += loss_fn(outputs, targets).item() * len(targets)
            correct += (outputs.argmax(1) == targets).sum().item()
            count += len(targets)
    model.train()
    return {"train_loss": float(total.detach()) / seen, "val_loss": val_loss / count,
            "val_accuracy": correct / count}
