# Corpus: other correct styles: torch.amp.autocast, grads set to None by hand, a scaler checked
# with is_enabled(), clipping written out with vector norms, and a loop that flushes groups.
# %% ch07_amp_step points=4 feedback=passed
def amp_step(model, optimizer, loss_fn, inputs, targets, scaler, device_type, dtype):
    for param in model.parameters():
        param.grad = None
    ctx = torch.amp.autocast(device_type, dtype=dtype)
    with ctx:
        loss = loss_fn(model(inputs), targets)
    value = float(loss.detach())
    use_scaler = scaler is not None and scaler.is_enabled()
    (scaler.scale(loss) if use_scaler else loss).backward()
    if use_scaler:
        scaler.step(optimizer)
        scaler.update()
    else:
        optimizer.step()
    return value
# %% ch07_clip_and_step points=4 feedback=passed
def clip_and_step(model, optimizer, scaler, max_norm):
    if scaler is not None:
        scaler.unscale_(optimizer)
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
    factor = torch.clamp(max_norm / (norm + 1e-6), max=1.0)
    for g in grads:
        g.mul_(factor)
    if scaler is not None:
        scaler.step(optimizer)
        scaler.update()
    elif all(torch.isfinite(g).all() for g in grads):
        optimizer.step()
    return norm.item()
# %% ch07_train_epoch_amp points=4 feedback=passed
def train_epoch_amp(model, loader, optimizer, loss_fn, scaler, accumulate, device_type, dtype, scheduler=None):
    total_loss = 0.0
    total_n = 0
    ran = []  # one entry per optimizer.step() that really ran (scaler.step skips it on inf)
    handle = optimizer.register_step_post_hook(lambda opt, args, kwargs: ran.append(True))

    def flush(group):
        nonlocal total_loss, total_n
        n_group = sum(len(y) for _, y in group)
        optimizer.zero_grad(set_to_none=True)
        for x, y in group:
            with torch.autocast(device_type, dtype=dtype):
                mean = loss_fn(model(x), y)
            part = mean * (len(y) / n_group)
            if scaler is None:
                part.backward()
            else:
                scaler.scale(part).backward()
            total_loss += mean.item() * len(y)
            total_n += len(y)
        ran.clear()
        if scaler is None:
            optimizer.step()
        else:
            scaler.step(optimizer)
            scaler.update()
        if ran and scheduler is not None:
            scheduler.step()

    pending = []
    for batch in loader:
        pending.append(batch)
        if len(pending) == accumulate:
            flush(pending)
            pending = []
    if pending:
        flush(pending)
    handle.remove()
    return total_loss / total_n
