# Corpus: zero_grad() inside the loop, the habit from the training loop: only the last
# micro-batch's gradient survives.
# %% ch03_accumulation_step points=0 feedback="only the last micro-batch"
def accumulation_step(model, optimizer, loss_fn, micro_batches):
    total = sum(len(y) for _, y in micro_batches)
    loss_sum = 0.0
    for x, y in micro_batches:
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        (loss * len(y) / total).backward()
        loss_sum += loss.item() * len(y)
    optimizer.step()
    return loss_sum / total
