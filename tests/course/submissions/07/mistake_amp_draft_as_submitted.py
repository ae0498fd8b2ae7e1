# Corpus: the colleague's draft_amp_step handed in as it is (renamed): it passes the visible check, and the feedback names all three mistakes: the scaled loss returned ("times the scale"), the optimizer stepping on the overflowing batch's gradients ("changed the weights to inf/NaN"), bfloat16 gradients adding up across calls ("what .grad still held").
# %% ch07_amp_step points=0 feedback="times the scale"
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
    scaler.unscale_(optimizer)
    optimizer.step()
    scaler.update()
    return loss.item()
