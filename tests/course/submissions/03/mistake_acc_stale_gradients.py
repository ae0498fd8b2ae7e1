# Corpus: no zero_grad() at the start: whatever lay in .grad is stepped on too.
# %% ch03_accumulation_step points=0 feedback="before the call"
def accumulation_step(model, optimizer, loss_fn, micro_batches):
    pad = getattr(loss_fn, "ignore_index", None)
    counts = [y.numel() if pad is None else int((y != pad).sum()) for _, y in micro_batches]
    total = sum(counts)
    loss_value = 0.0
    for (x, y), n in zip(micro_batches, counts):
        scale = 1.0 if loss_fn.reduction == "sum" else n / total
        loss = loss_fn(model(x), y) * scale
        loss.backward()
        loss_value += loss.item()
    optimizer.step()
    return loss_value
