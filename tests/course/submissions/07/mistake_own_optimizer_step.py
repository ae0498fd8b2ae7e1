# Corpus: the optimizer stepped directly after unscaling, so an overflowing step is applied
# (NaN weights) instead of skipped; in both exercises.
# %% ch07_amp_step points=0 feedback="scaler.step(optimizer)"
def amp_step(model, optimizer, loss_fn, inputs, targets, scaler, device_type, dtype):
    optimizer.zero_grad()
    with torch.autocast(device_type=device_type, dtype=dtype):
        loss = loss_fn(model(inputs), targets)
    if scaler is not None:
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        optimizer.step()
        scaler.update()
    else:
        loss.backward()
        optimizer.step()
    return loss.item()
# %% ch07_clip_and_step points=0 feedback="scaler.step(optimizer)"
def clip_and_step(model, optimizer, scaler, max_norm):
    if scaler is not None:
        scaler.unscale_(optimizer)
    norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    if scaler is not None:
        scaler.update()
    return norm.item()
