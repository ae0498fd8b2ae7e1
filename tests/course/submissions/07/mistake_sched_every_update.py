# Corpus: the scheduler steps after every scaler.step, so the warm-up goes on through updates the scaler skipped.
# %% ch07_train_epoch_amp points=0 feedback="must not move on a skipped update"
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
            if scaler is not None:
                scaler.scale(weighted).backward()
            else:
                weighted.backward()
            epoch_loss += loss.item() * targets.shape[0]
            epoch_samples += targets.shape[0]
        if scaler is not None:
            scaler.step(optimizer)
            scaler.update()
        else:
            optimizer.step()
        if scheduler is not None:
            scheduler.step()
    return epoch_loss / epoch_samples
