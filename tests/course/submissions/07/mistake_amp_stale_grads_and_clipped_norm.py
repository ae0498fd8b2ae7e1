# Corpus: gradients never cleared in amp_step; clip_and_step returns the norm after clipping.
# %% ch07_amp_step points=0 feedback="old gradients cleared" unlike="exactly once per step"
def amp_step(model, optimizer, loss_fn, inputs, targets, scaler, device_type, dtype):
    with torch.autocast(device_type=device_type, dtype=dtype):
        loss = loss_fn(model(inputs), targets)
    if scaler is not None:
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    else:
        loss.backward()
        optimizer.step()
    return loss.item()
# %% ch07_clip_and_step points=0 feedback="before clipping"
def clip_and_step(model, optimizer, scaler, max_norm):
    if scaler is not None:
        scaler.unscale_(optimizer)
    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    clipped = torch.linalg.vector_norm(
        torch.stack([p.grad.norm() for p in model.parameters() if p.grad is not None])
    )
    if scaler is not None:
        scaler.step(optimizer)
        scaler.update()
    else:
        optimizer.step()
    return clipped.item()
