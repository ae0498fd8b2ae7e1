# Corpus: gradients cleared before every micro-batch: only the last micro-batch of a group counts.
# %% ch07_train_epoch_amp points=0 feedback="cleared once per group"
def train_epoch_amp(model, loader, optimizer, loss_fn, scaler, accumulate, device_type, dtype, scheduler=None):
    batches = list(loader)
    total, count = 0.0, 0
    for start in range(0, len(batches), accumulate):
        group = batches[start : start + accumulate]
        n = sum(len(y) for _, y in group)
        for x, y in group:
            optimizer.zero_grad()
            with torch.autocast(device_type=device_type, dtype=dtype):
                loss = loss_fn(model(x), y)
            w = loss * len(y) / n
            (scaler.scale(w) if scaler is not None else w).backward()
            total += loss.item() * len(y)
            count += len(y)
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
    return total / count
