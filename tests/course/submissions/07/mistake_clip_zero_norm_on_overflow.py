# Corpus: a skipped step reported as a norm of 0.0: the overflow disappears from the logs.
# %% ch07_clip_and_step points=0 feedback="should be inf or NaN"
def clip_and_step(model, optimizer, scaler, max_norm):
    if scaler is None:
        total = nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        optimizer.step()
        return total.item()
    scaler.unscale_(optimizer)
    total = nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    scaler.step(optimizer)
    scaler.update()
    return float(total) if torch.isfinite(total) else 0.0
