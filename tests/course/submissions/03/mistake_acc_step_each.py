# Corpus: optimizer.step() after every micro-batch: k small steps instead of one.
# %% ch03_accumulation_step points=0 feedback="step once"
def accumulation_step(model, optimizer, loss_fn, micro_batches):
    total = sum(len(y) for _, y in micro_batches)
    optimizer.zero_grad()
    loss_sum = 0.0
    for x, y in micro_batches:
        loss = loss_fn(model(x), y)
        (loss * len(y) / total).backward()
        optimizer.step()
        loss_sum += loss.item() * len(y)
    return loss_sum / total
