# Corpus: the draft called as it is, with two of its mistakes patched around it (gradients cleared before, the returned loss divided by the scale read before the call): the optimizer still steps on the overflowing batch's gradients, named in the feedback.
# %% ch07_amp_step points=0 feedback="changed the weights to inf/NaN"
def amp_step(model, optimizer, loss_fn, inputs, targets, scaler, device_type, dtype):
    optimizer.zero_grad()
    scale = 1.0 if scaler is None else scaler.get_scale()
    return draft_amp_step(model, optimizer, loss_fn, inputs, targets, scaler, device_type, dtype) / scale
