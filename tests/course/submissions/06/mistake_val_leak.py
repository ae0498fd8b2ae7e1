# Corpus: training fixed, validation without no_grad and its graph-carrying outputs
# kept in a list; numbers returned as floats, so the visible test passes.
# %% ch06_train_and_validate points=0 feedback="pile up during validation"
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
    outs, ys = [], []
    for inputs, targets in val_loader:
        outs.append(model(inputs.to(device)))
        ys.append(targets.to(device))
    model.train()
    outputs, targets = torch.cat(outs), torch.cat(ys)
    return {"train_loss": total / seen, "val_loss": loss_fn(outputs, targets).item(),
            "val_accuracy": (outputs.argmax(1) == targets).float().mean().item()}
