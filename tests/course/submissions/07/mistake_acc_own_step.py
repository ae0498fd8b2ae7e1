# Corpus: the gradients unscaled by hand and optimizer.step() called directly: an update whose
# gradients overflowed is applied instead of skipped.
# %% ch07_train_epoch_amp points=0 feedback="scaler.step(optimizer), which skips"
def train_epoch_amp(model, loader, optimizer, loss_fn, scaler, accumulate, device_type, dtype, scheduler=None):
    steps = []
    hook = optimizer.register_step_post_hook(lambda *args: steps.append(1))
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
        done = len(steps)
        if scaler is not None:
            scaler.unscale_(optimizer)
            optimizer.step()
            scaler.update()
        else:
            optimizer.step()
        if scheduler is not None and len(steps) > done:
            scheduler.step()
    hook.remove()
    return epoch_loss / epoch_samples
