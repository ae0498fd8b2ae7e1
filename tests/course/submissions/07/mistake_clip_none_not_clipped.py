# Corpus: without a scaler the step is taken but the gradients are not clipped.
# %% ch07_clip_and_step points=0 feedback="total norm is at most max_norm"
def clip_and_step(model, optimizer, scaler, max_norm):
    if scaler is None:
        total = torch.cat([p.grad.flatten() for p in model.parameters()]).norm()
        optimizer.step()
        return total.item()
    scaler.unscale_(optimizer)
    total = nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    scaler.step(optimizer)
    scaler.update()
    return float(total)
