# Corpus: gradients cleared after the step instead of before the first backward: .grad is empty
# afterwards.
# %% ch03_accumulation_step points=0 feedback="not after the step"
def accumulation_step(model, optimizer, loss_fn, micro_batches):
    total = sum(len(y) for _, y in micro_batches)
    loss_sum = 0.0
    for x, y in micro_batches:
        loss = loss_fn(model(x), y)
        (loss * len(y) / total).backward()
        loss_sum += loss.item() * len(y)
    optimizer.step()
    optimizer.zero_grad()
    return loss_sum / total
