# Corpus: the right step for every loss, but a summed loss reported per sample: the contract
# returns the large batch's loss as loss_fn computes it.
# %% ch03_accumulation_step points=0 feedback="returned loss is a mean"
def accumulation_step(model, optimizer, loss_fn, micro_batches):
    ignore = getattr(loss_fn, "ignore_index", None)
    counts = [y.numel() if ignore is None else int((y != ignore).sum()) for _, y in micro_batches]
    optimizer.zero_grad()
    total = 0.0
    for (x, y), n in zip(micro_batches, counts):
        loss = loss_fn(model(x), y)
        if loss_fn.reduction == "mean":
            loss = loss * n / sum(counts)
        loss.backward()
        total += loss.item()
    optimizer.step()
    if loss_fn.reduction == "sum":
        return total / sum(len(y) for _, y in micro_batches)  # per sample, like the mean case
    return total
