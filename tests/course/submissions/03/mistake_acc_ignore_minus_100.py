# Corpus: padding counted out, but as -100 always (cross-entropy's default): a loss built with
# another ignore_index (0 in the third hidden input) gets its padding counted in again.
# %% ch03_accumulation_step points=0 feedback="here 0: padding"
def accumulation_step(model, optimizer, loss_fn, micro_batches):
    def real(targets):
        return targets.numel() if targets.is_floating_point() else int((targets != -100).sum())

    total = sum(real(y) for _, y in micro_batches)
    optimizer.zero_grad()
    result = 0.0
    for x, y in micro_batches:
        loss = loss_fn(model(x), y)
        weight = 1.0 if loss_fn.reduction == "sum" else real(y) / total
        (loss * weight).backward()
        result += loss.item() * weight
    optimizer.step()
    return result
