# Corpus: the scheduler advances before the optimizer step (when the update will be taken), so each update runs at the next rate.
# %% ch07_train_epoch_amp points=0 feedback="meant for the next one"
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
            scaler.unscale_(optimizer)
            grads = [p.grad for p in model.parameters() if p.grad is not None]
            if scheduler is not None and all(torch.isfinite(g).all() for g in grads):
                scheduler.step()
            scaler.step(optimizer)
            scaler.update()
        else:
            if scheduler is not None:
                scheduler.step()
            optimizer.step()
    return epoch_loss / epoch_samples
