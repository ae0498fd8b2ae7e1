# Corpus: the textbook loss / accumulate, which is wrong for the shorter last group.
# %% ch07_train_epoch_amp points=0 feedback="divided by accumulate"
def train_epoch_amp(model, loader, optimizer, loss_fn, scaler, accumulate, device_type, dtype, scheduler=None):
    total, count = 0.0, 0
    optimizer.zero_grad()
    pending = 0
    for x, y in loader:
        with torch.autocast(device_type=device_type, dtype=dtype):
            loss = loss_fn(model(x), y)
        w = loss / accumulate
        (scaler.scale(w) if scaler is not None else w).backward()
        total += loss.item() * len(y)
        count += len(y)
        pending += 1
        if pending == accumulate:
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
            optimizer.zero_grad()
            pending = 0
    if pending:
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
        optimizer.zero_grad()
    return total / count
