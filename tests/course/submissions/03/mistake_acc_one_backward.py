# Corpus: the weighted losses added up and one backward at the end: every graph alive at once.
# %% ch03_accumulation_step points=0 feedback="once per micro-batch"
def accumulation_step(model, optimizer, loss_fn, micro_batches):
    total = sum(len(y) for _, y in micro_batches)
    optimizer.zero_grad()
    loss = sum(loss_fn(model(x), y) * len(y) / total for x, y in micro_batches)
    loss.backward()
    optimizer.step()
    return loss.item()
