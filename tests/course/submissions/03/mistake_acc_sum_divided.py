# Corpus: padding handled, but every loss treated as a mean: with reduction="sum" the micro-batch
# sums are scaled down and the step shrinks.
# %% ch03_accumulation_step points=0 feedback="reduction='sum'"
def accumulation_step(model, optimizer, loss_fn, micro_batches):
    ignore = getattr(loss_fn, "ignore_index", None)
    counts = [y.numel() if ignore is None else int((y != ignore).sum()) for _, y in micro_batches]
    total = sum(counts)
    optimizer.zero_grad()
    result = 0.0
    for (x, y), n in zip(micro_batches, counts):
        loss = loss_fn(model(x), y)
        (loss * n / total).backward()
        result += loss.item() * n / total
    optimizer.step()
    return result
