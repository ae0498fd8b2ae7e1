# Corpus: the draft's scaled loss "fixed" by dividing by the scale after scaler.update(), which has already grown or halved it: the returned losses are off by that factor.
# %% ch07_amp_step points=0 feedback="return the batch's loss, unscaled"
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
    return loss.item() / scaler.get_scale()
