# Corpus: the draft repaired in place, keeping its shape: gradients cleared first, the loss's value kept before scaling, scaler.unscale_ kept and scaler.step taking the step after it (it knows the gradients are already unscaled).
# %% ch07_amp_step points=4 feedback=passed
def amp_step(model, optimizer, loss_fn, inputs, targets, scaler, device_type, dtype):
    optimizer.zero_grad()
    with torch.autocast(device_type=device_type, dtype=dtype):
        loss = loss_fn(model(inputs), targets)
    value = loss.item()
    if scaler is None:
        loss.backward()
        optimizer.step()
        return value
    loss = scaler.scale(loss)
    loss.backward()
    scaler.unscale_(optimizer)
    scaler.step(optimizer)
    scaler.update()
    return value
