# Corpus: the scaler steps after every batch, so accumulate is ignored.
# %% ch07_train_epoch_amp points=0 feedback="not per batch"
def train_epoch_amp(model, loader, optimizer, loss_fn, scaler, accumulate, device_type, dtype, scheduler=None):
    total, count = 0.0, 0
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast(device_type=device_type, dtype=dtype):
            loss = loss_fn(model(x), y)
        (scaler.scale(loss / accumulate) if scaler is not None else loss / accumulate).backward()
        taken = True
        if scaler is not None:
            before = scaler.get_scale()
            scaler.step(optimizer)
            scaler.update()
            taken = scaler.get_scale() >= before
        else:
            optimizer.step()
        if scheduler is not None and taken:
            scheduler.step()
        total += loss.item() * len(y)
        count += len(y)
    return total / count
