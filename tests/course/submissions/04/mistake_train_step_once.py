# Corpus: backward() on every batch but optimizer.step() once, after the loop: one update per epoch,
# made of every batch's gradients.
# %% ch04_train_one_epoch points=0 feedback="zero_grad"
def train_one_epoch(model, loader, optimizer, loss_fn, device):
    model.train()
    running, seen = 0.0, 0
    for inputs, targets in loader:
        inputs = inputs.to(device)
        targets = targets.to(device)
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        running += loss.item() * inputs.size(0)
        seen += inputs.size(0)
    optimizer.step()
    return running / seen
