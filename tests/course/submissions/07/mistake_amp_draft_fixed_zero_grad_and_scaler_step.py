# Corpus: the draft with two of its three mistakes fixed (gradients cleared in both branches, scaler.step after unscale_): the scaled loss is still returned.
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
    scaler.step(optimizer)
    scaler.update()
    return loss.item()
