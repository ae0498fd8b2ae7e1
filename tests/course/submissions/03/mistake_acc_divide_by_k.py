# Corpus: the textbook 1/k scaling: right for equal micro-batches, wrong for the uneven hidden ones.
# %% ch03_accumulation_step points=0 feedback="divide by k"
def accumulation_step(model, optimizer, loss_fn, micro_batches):
    k = len(micro_batches)
    optimizer.zero_grad()
    total = 0.0
    for x, y in micro_batches:
        loss = loss_fn(model(x), y) / k
        loss.backward()
        total += loss.item()
    optimizer.step()
    return total
