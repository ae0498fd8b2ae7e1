# Corpus: the right gradients, but the returned loss averages the micro-batches by their rows,
# so padding counts in the reported number.
# %% ch03_accumulation_step points=0 feedback="weighs the micro-batches by their rows"
def accumulation_step(model, optimizer, loss_fn, micro_batches):
    ignore = getattr(loss_fn, "ignore_index", None)
    counts = [y.numel() if ignore is None else int((y != ignore).sum()) for _, y in micro_batches]
    rows = sum(len(y) for _, y in micro_batches)
    optimizer.zero_grad()
    reported = 0.0
    for (x, y), n in zip(micro_batches, counts):
        loss = loss_fn(model(x), y)
        mean = loss_fn.reduction == "mean"
        (loss * (n / sum(counts) if mean else 1.0)).backward()
        reported += loss.item() * (len(y) / rows if mean else 1.0)
    optimizer.step()
    return reported
