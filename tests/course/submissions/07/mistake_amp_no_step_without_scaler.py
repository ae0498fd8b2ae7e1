# Corpus: only the scaler's branch written: without a scaler the gradients are computed and no step
# is taken.
# %% ch07_amp_step points=0 feedback="take the optimizer step"
def amp_step(model, optimizer, loss_fn, inputs, targets, scaler, device_type, dtype):
    optimizer.zero_grad()
    with torch.autocast(device_type=device_type, dtype=dtype):
        outputs = model(inputs)
        loss = loss_fn(outputs, targets)
    if scaler is not None:
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    else:
        loss.backward()
    return loss.item()
