# Corpus: autocast without the dtype (the device's default, bfloat16 on the CPU) and the loss
# computed after the with block, in the accumulation loop.
# %% ch07_amp_step points=0 feedback="dtype"
def amp_step(model, optimizer, loss_fn, inputs, targets, scaler, device_type, dtype):
    optimizer.zero_grad()
    with torch.autocast(device_type):
        loss = loss_fn(model(inputs), targets)
    if scaler is not None:
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    else:
        loss.backward()
        optimizer.step()
    return loss.item()
# %% ch07_train_epoch_amp points=0 feedback="outside autocast"
def train_epoch_amp(model, loader, optimizer, loss_fn, scaler, accumulate, device_type, dtype, scheduler=None):
    batches = list(loader)
    total, count = 0.0, 0
    for start in range(0, len(batches), accumulate):
        group = batches[start : start + accumulate]
        n = sum(len(y) for _, y in group)
        optimizer.zero_grad()
        for x, y in group:
            with torch.autocast(device_type=device_type, dtype=dtype):
                out = model(x)
            loss = loss_fn(out, y)
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
