# Corpus: micro-batch losses added without weighting (k times the update), and the epoch's loss
# as a plain average of the batch losses.
# %% ch07_train_epoch_amp points=0 feedback="without weighting"
def train_epoch_amp(model, loader, optimizer, loss_fn, scaler, accumulate, device_type, dtype, scheduler=None):
    batches = list(loader)
    losses = []
    for start in range(0, len(batches), accumulate):
        optimizer.zero_grad()
        for x, y in batches[start : start + accumulate]:
            with torch.autocast(device_type=device_type, dtype=dtype):
                loss = loss_fn(model(x), y)
            (scaler.scale(loss) if scaler is not None else loss).backward()
            losses.append(loss.item())
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
    return sum(losses) / len(losses)
