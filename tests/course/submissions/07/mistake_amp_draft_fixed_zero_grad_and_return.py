# Corpus: the draft with two of its three mistakes fixed (gradients cleared in both branches, the loss returned unscaled): the optimizer still steps on the overflowing batch's gradients.
# %% ch07_amp_step points=0 feedback="changed the weights to inf/NaN"
def amp_step(model, optimizer, loss_fn, inputs, targets, scaler, device_type, dtype):
    optimizer.zero_grad()
    with torch.autocast(device_type=device_type, dtype=dtype):
        loss = loss_fn(model(inputs), targets)
    if scaler is None:
        loss.backward()
        optimizer.step()
        return loss.item()
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    optimizer.step()
    scaler.update()
    return loss.item()
