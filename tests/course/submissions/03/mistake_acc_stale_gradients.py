# Corpus: no zero_grad() at the start: whatever lay in .grad is stepped on too.
# %% ch03_accumulation_step points=0 feedback="before the call"
def accumulation_step(model, optimizer, loss_fn, micro_batches):
    total = sum(len(y) for _, y in micro_batches)
    loss_sum = 0.0
    for x, y in micro_batches:
        loss = loss_fn(model(x), y)
        (loss * len(y) / total).backward()
        loss_sum += loss.item() * len(y)
    optimizer.step()
    return loss_sum / total
