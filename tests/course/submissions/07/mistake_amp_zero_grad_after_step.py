# Corpus: the draft's bfloat16 leak "fixed" by clearing the gradients after each step, in both branches: the first call still adds what .grad held before it (bfloat16 on seed 0, float16 on seed 1).
# %% ch07_amp_step points=0 feedback="what .grad still held"
def amp_step(model, optimizer, loss_fn, inputs, targets, scaler, device_type, dtype):
    with torch.autocast(device_type=device_type, dtype=dtype):
        loss = loss_fn(model(inputs), targets)
    if scaler is None:
        loss.backward()
        optimizer.step()
    else:
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    optimizer.zero_grad()
    return loss.item()
