# Corpus: only full groups step: the gradients of the shorter last group are computed and thrown away.
# %% ch07_train_epoch_amp points=0 feedback="last, shorter group"
def train_epoch_amp(model, loader, optimizer, loss_fn, scaler, accumulate, device_type, dtype, scheduler=None):
    total, count = 0.0, 0
    optimizer.zero_grad()
    for i, (x, y) in enumerate(loader):
        with torch.autocast(device_type=device_type, dtype=dtype):
            loss = loss_fn(model(x), y)
        w = loss / accumulate
        (scaler.scale(w) if scaler is not None else w).backward()
        total += loss.item() * len(y)
        count += len(y)
        if (i + 1) % accumulate == 0:
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
