# Corpus: clip_and_step trusts the scaler to skip non-finite steps and, without one, steps whatever the norm: an inf gradient reaches the weights. Loses the exercise.
# %% ch07_clip_and_step points=0 feedback="without a scaler, a step whose gradients held inf changed the weights"
def clip_and_step(model, optimizer, scaler, max_norm):
    if scaler is None:
        total = nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        optimizer.step()
        return total.item()
    scaler.unscale_(optimizer)
    total = nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    scaler.step(optimizer)
    scaler.update()
    return float(total)
