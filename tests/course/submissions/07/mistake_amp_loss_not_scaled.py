# Corpus: scaler.step(optimizer) and scaler.update(), but backward() on the loss itself: with the
# hidden tests' fresh scaler, scaler.step refuses (nothing was scaled), and torch's error names it.
# %% ch07_amp_step points=0 feedback="did not use scaler.scale"
def amp_step(model, optimizer, loss_fn, inputs, targets, scaler, device_type, dtype):
    optimizer.zero_grad()
    with torch.autocast(device_type=device_type, dtype=dtype):
        outputs = model(inputs)
        loss = loss_fn(outputs, targets)
    if scaler is not None:
        loss.backward()
        scaler.step(optimizer)
        scaler.update()
    else:
        loss.backward()
        optimizer.step()
    return loss.item()
