# Corpus: the draft with only its bfloat16 leak fixed (gradients cleared before both branches): the scaled loss returned ("times the scale") and the optimizer stepping on the overflowing batch's gradients ("changed the weights to inf/NaN") are both named.
# %% ch07_amp_step points=0 feedback="times the scale"
def amp_step(model, optimizer, loss_fn, inputs, targets, scaler, device_type, dtype):
    optimizer.zero_grad()
    with torch.autocast(device_type=device_type, dtype=dtype):
        loss = loss_fn(model(inputs), targets)
    if scaler is None:
        loss.backward()
        optimizer.step()
        return loss.item()
    loss = scaler.scale(loss)
    loss.backward()
    scaler.unscale_(optimizer)
    optimizer.step()
    scaler.update()
    return loss.item()
