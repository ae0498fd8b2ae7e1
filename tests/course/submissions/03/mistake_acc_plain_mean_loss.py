# Corpus: the right update, but the returned loss is the plain mean of the micro-batch losses.
# %% ch03_accumulation_step points=0 feedback="plain average"
def accumulation_step(model, optimizer, loss_fn, micro_batches):
    pad = getattr(loss_fn, "ignore_index", None)
    counts = [y.numel() if pad is None else int((y != pad).sum()) for _, y in micro_batches]
    total = sum(counts)
    optimizer.zero_grad()
    losses = []
    for (x, y), n in zip(micro_batches, counts):
        loss = loss_fn(model(x), y)
        scale = 1.0 if loss_fn.reduction == "sum" else n / total
        (loss * scale).backward()
        losses.append(loss.item())
    optimizer.step()
    return sum(losses) / len(losses)
