# Corpus: another correct accumulation_step: the loss switched to reduction="sum" for the
# micro-batches (and restored), then divided once by what the large batch's mean counts.
# %% ch03_accumulation_step points=4 feedback=passed
def accumulation_step(model, optimizer, loss_fn, micro_batches):
    reduction = loss_fn.reduction
    if reduction == "mean":
        ignore = getattr(loss_fn, "ignore_index", None)
        denominator = float(sum(
            y.numel() if ignore is None else (y != ignore).sum().item() for _, y in micro_batches
        ))
    else:
        denominator = 1.0
    loss_fn.reduction = "sum"  # each micro-batch's sum, over the targets that count
    try:
        optimizer.zero_grad(set_to_none=True)
        accumulated = 0.0
        for x, y in micro_batches:
            part = loss_fn(model(x), y) / denominator
            part.backward()
            accumulated += part.item()
    finally:
        loss_fn.reduction = reduction
    optimizer.step()
    return accumulated
