# Corpus: a leaky epoch that tries to hide from the probes: the forward hooks of the model and the
# loss cleared, and the grad_fn metadata of kept outputs wiped.
# %% ch06_train_and_validate points=0 feedback="grows during validation"
def train_and_validate(model, train_loader, val_loader, optimizer, loss_fn, device):
    model._forward_hooks.clear()
    model._forward_pre_hooks.clear()
    loss_fn._forward_hooks.clear()
    model.train()
    total, seen = 0.0, 0
    for inputs, targets in train_loader:
        optimizer.zero_grad()
        loss = loss_fn(model(inputs.to(device)), targets.to(device))
        loss.backward()
        optimizer.step()
        total += loss.item() * len(targets)
        seen += len(targets)
    model.eval()
    outs, ys = [], []
    for inputs, targets in val_loader:
        out = model(inputs.to(device))
        out.grad_fn.metadata.clear()
        outs.append(out)
        ys.append(targets.to(device))
    model.train()
    outputs, targets = torch.cat(outs), torch.cat(ys)
    return {"train_loss": total / seen, "val_loss": loss_fn(outputs, targets).item(),
            "val_accuracy": (outputs.argmax(1) == targets).float().mean().item()}
