# Corpus: amp_step returns the scaled loss; clip_and_step divides by the scale by hand and then
# lets scaler.step divide again.
# %% ch07_amp_step points=0 feedback="times the scale"
def amp_step(model, optimizer, loss_fn, inputs, targets, scaler, device_type, dtype):
    optimizer.zero_grad()
    with torch.autocast(device_type=device_type, dtype=dtype):
        loss = loss_fn(model(inputs), targets)
    if scaler is not None:
        loss = scaler.scale(loss)
    loss.backward()
    if scaler is not None:
        scaler.step(optimizer)
        scaler.update()
    else:
        optimizer.step()
    return loss.item()
# %% ch07_clip_and_step points=0 feedback="unscaled exactly once"
def clip_and_step(model, optimizer, scaler, max_norm):
    if scaler is not None:
        inv = 1.0 / scaler.get_scale()
        for p in model.parameters():
            if p.grad is not None:
                p.grad.mul_(inv)
    norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    if scaler is not None:
        scaler.step(optimizer)
        scaler.update()
    else:
        optimizer.step()
    return norm.item()
