# Corpus: scaler.update() once, after the epoch: the scaler refuses a second step before an update.
# %% ch07_train_epoch_amp points=0 feedback="update()"
def train_epoch_amp(model, loader, optimizer, loss_fn, scaler, accumulate, device_type, dtype, scheduler=None):
    steps = []
    hook = optimizer.register_step_post_hook(lambda *args: steps.append(1))
    batches = list(loader)
    total, count = 0.0, 0
    for start in range(0, len(batches), accumulate):
        group = batches[start : start + accumulate]
        n = sum(len(y) for _, y in group)
        optimizer.zero_grad()
        for x, y in group:
            with torch.autocast(device_type=device_type, dtype=dtype):
                loss = loss_fn(model(x), y)
            w = loss * len(y) / n
            (scaler.scale(w) if scaler is not None else w).backward()
            total += loss.item() * len(y)
            count += len(y)
        done = len(steps)
        if scaler is not None:
            scaler.step(optimizer)
        else:
            optimizer.step()
        if scheduler is not None and len(steps) > done:
            scheduler.step()
    if scaler is not None:
        scaler.update()
    hook.remove()
    return total / count
