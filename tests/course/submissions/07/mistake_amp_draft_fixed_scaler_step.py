# Corpus: the draft with only its step fixed (scaler.step after unscale_): bfloat16 gradients adding up across calls ("what .grad still held") and the scaled loss returned ("times the scale") are both named.
# %% ch07_amp_step points=0 feedback="what .grad still held"
def amp_step(model, optimizer, loss_fn, inputs, targets, scaler, device_type, dtype):
    with torch.autocast(device_type=device_type, dtype=dtype):
        loss = loss_fn(model(inputs), targets)
    if scaler is None:
        loss.backward()
        optimizer.step()
        return loss.item()
    optimizer.zero_grad()
    loss = scaler.scale(loss)
    loss.backward()
    scaler.step(optimizer)
    scaler.update()
    return loss.item()
