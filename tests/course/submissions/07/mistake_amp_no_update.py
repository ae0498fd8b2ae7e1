# Corpus: scaler.update() forgotten in both steps: the scale never adapts.
# %% ch07_amp_step points=0 feedback="scaler.update()"
def amp_step(model, optimizer, loss_fn, inputs, targets, scaler, device_type, dtype):
    optimizer.zero_grad()
    with torch.autocast(device_type=device_type, dtype=dtype):
        loss = loss_fn(model(inputs), targets)
    if scaler is not None:
        scaler.scale(loss).backward()
        scaler.step(optimizer)
    else:
        loss.backward()
        optimizer.step()
    return loss.item()
# %% ch07_clip_and_step points=0 feedback="scaler.update()"
def clip_and_step(model, optimizer, scaler, max_norm):
    if scaler is not None:
        scaler.unscale_(optimizer)
    norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    if scaler is not None:
        scaler.step(optimizer)
    else:
        optimizer.step()
    return norm.item()
