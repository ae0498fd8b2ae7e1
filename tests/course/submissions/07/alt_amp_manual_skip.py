# Corpus: the skip written by hand: unscale_, then the optimizer steps only when every gradient is finite, scaler.update() every call; the loss divided by the scale read before the call (a power of two: exact).
# %% ch07_amp_step points=4 feedback=passed
def amp_step(model, optimizer, loss_fn, inputs, targets, scaler, device_type, dtype):
    for group in optimizer.param_groups:
        for param in group["params"]:
            param.grad = None
    with torch.autocast(device_type=device_type, dtype=dtype):
        loss = loss_fn(model(inputs), targets)
    if scaler is None:
        loss.backward()
        optimizer.step()
        return float(loss)
    scale = scaler.get_scale()
    scaled = scaler.scale(loss)
    scaled.backward()
    scaler.unscale_(optimizer)
    grads = [p.grad for g in optimizer.param_groups for p in g["params"] if p.grad is not None]
    if all(torch.isfinite(g).all() for g in grads):
        optimizer.step()
    scaler.update()
    return scaled.item() / scale
