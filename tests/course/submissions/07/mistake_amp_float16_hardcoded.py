# Corpus: autocast always in float16 (the dtype argument ignored): right for the scaler's calls,
# wrong for the bfloat16 ones.
# %% ch07_amp_step points=0 feedback="use the dtype passed in"
def amp_step(model, optimizer, loss_fn, inputs, targets, scaler, device_type, dtype):
    optimizer.zero_grad()
    with torch.autocast(device_type=device_type, dtype=torch.float16):
        outputs = model(inputs)
        loss = loss_fn(outputs, targets)
    if scaler is not None:
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    else:
        loss.backward()
        optimizer.step()
    return loss.item()
