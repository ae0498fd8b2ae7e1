# Corpus: a batch whose loss is not finite is skipped by hand, scaler and all: the scale never
# learns that it overflowed.
# %% ch07_amp_step points=0 feedback="did not drop"
import math


def amp_step(model, optimizer, loss_fn, inputs, targets, scaler, device_type, dtype):
    optimizer.zero_grad()
    with torch.autocast(device_type=device_type, dtype=dtype):
        loss = loss_fn(model(inputs), targets)
    value = loss.item()
    if not math.isfinite(value):
        return value
    if scaler is not None:
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    else:
        loss.backward()
        optimizer.step()
    return value
