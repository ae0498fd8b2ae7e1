# Corpus: the draft with only its returned loss fixed: bfloat16 gradients adding up across calls ("what .grad still held") and the optimizer stepping on the overflowing batch's gradients ("changed the weights to inf/NaN") are both named.
# %% ch07_amp_step points=0 feedback="what .grad still held"
def amp_step(model, optimizer, loss_fn, inputs, targets, scaler, device_type, dtype):
    with torch.autocast(device_type=device_type, dtype=dtype):
        loss = loss_fn(model(inputs), targets)
    if scaler is None:
        loss.backward()
        optimizer.step()
        return loss.item()
    optimizer.zero_grad()
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    optimizer.step()
    scaler.update()
    return loss.item()
