# Corpus: backward() on the weighted losses without scaler.scale(): with the hidden tests' fresh
# scaler, scaler.step refuses (nothing was scaled), and torch's error names the missing call.
# %% ch07_train_epoch_amp points=0 feedback="did not use scaler.scale"
def train_epoch_amp(model, loader, optimizer, loss_fn, scaler, accumulate, device_type, dtype, scheduler=None):
    batches = list(loader)
    epoch_loss, epoch_samples = 0.0, 0
    for start in range(0, len(batches), accumulate):
        group = batches[start : start + accumulate]
        group_size = sum(targets.shape[0] for _, targets in group)
        optimizer.zero_grad()
        for inputs, targets in group:
            with torch.autocast(device_type=device_type, dtype=dtype):
                loss = loss_fn(model(inputs), targets)
            weighted = loss * targets.shape[0] / group_size
            weighted.backward()
            epoch_loss += loss.item() * targets.shape[0]
            epoch_samples += targets.shape[0]
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
    return epoch_loss / epoch_samples
