# Corpus: the epoch ends with model.eval(), ready for validation: the model is not left in train mode.
# %% ch04_train_one_epoch points=0 feedback="be left, in train mode"
def train_one_epoch(model, loader, optimizer, loss_fn, device):
    model.train()
    running, seen = 0.0, 0
    for inputs, targets in loader:
        inputs = inputs.to(device)
        targets = targets.to(device)
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        running += loss.item() * inputs.size(0)
        seen += inputs.size(0)
    model.eval()  # ready for validation
    return running / seen
