# Corpus: a learner's correct answers, written from the docstrings (the base of every other file).
# %% ch07_diagnose_profile points=3 feedback=passed
def diagnose_profile(records):
    waited = sum(r["wait_ms"] for r in records)
    computed = sum(r["compute_ms"] for r in records)
    operators = sum(r["ops"] for r in records)
    found = set()
    # the starved CNN waited about 40 % of each step, the in-memory one under 1 %
    if waited / (waited + computed) > 0.25:
        found.add("input")
    if min(r["reads"] for r in records) >= 1:
        found.add("sync")
    # the narrow MLP spent about 5 microseconds per operator, the CNN a few hundred
    if operators and 1000 * computed / operators < 50:
        found.add("launch")
    return found
# %% ch07_amp_step points=4 feedback=passed
def amp_step(model, optimizer, loss_fn, inputs, targets, scaler, device_type, dtype):
    optimizer.zero_grad()
    with torch.autocast(device_type=device_type, dtype=dtype):
        outputs = model(inputs)
        loss = loss_fn(outputs, targets)
    if scaler is not None:
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    else:
        loss.backward()
        optimizer.step()
    return loss.item()
# %% ch07_clip_and_step points=4 feedback=passed
def clip_and_step(model, optimizer, scaler, max_norm):
    if scaler is None:
        total = nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        if total.isfinite():  # no scaler to skip a step with inf/NaN gradients
            optimizer.step()
        return total.item()
    scaler.unscale_(optimizer)
    total = nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    scaler.step(optimizer)
    scaler.update()
    return float(total)
# %% ch07_train_epoch_amp points=4 feedback=passed
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
        stepped = True
        if scaler is not None:
            scale_before = scaler.get_scale()
            scaler.step(optimizer)
            scaler.update()
            stepped = scaler.get_scale() >= scale_before  # halved: the step was skipped
        else:
            optimizer.step()
        if scheduler is not None and stepped:
            scheduler.step()
    return epoch_loss / epoch_samples
