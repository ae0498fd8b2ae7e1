# Corpus: autocast around each micro-batch's backward too, and gradients cleared before every
# micro-batch: two mistakes in one answer; the first found (autocast) is the one reported.
# %% ch07_train_epoch_amp points=0 feedback="backward() ran inside autocast"
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
