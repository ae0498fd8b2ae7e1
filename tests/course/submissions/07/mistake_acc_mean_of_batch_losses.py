# Corpus: the right updates, but the epoch's loss is the plain mean of the batch losses (the
# short last batch counts as much as a full one).
# %% ch07_train_epoch_amp points=0 feedback="mean loss per sample"
def train_epoch_amp(model, loader, optimizer, loss_fn, scaler, accumulate, device_type, dtype, scheduler=None):
    batches = list(loader)
    batch_losses = []
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
            batch_losses.append(loss.item())
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
    return sum(batch_losses) / len(batch_losses)
