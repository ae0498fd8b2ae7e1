# Corpus: the right update, but the returned loss is the plain mean of the micro-batch losses.
# %% ch03_accumulation_step points=0 feedback="plain average"
def accumulation_step(model, optimizer, loss_fn, micro_batches):
    total = sum(len(y) for _, y in micro_batches)
    optimizer.zero_grad()
    losses = []
    for x, y in micro_batches:
        loss = loss_fn(model(x), y)
        (loss * len(y) / total).backward()
        losses.append(loss.item())
    optimizer.step()
    return sum(losses) / len(losses)
