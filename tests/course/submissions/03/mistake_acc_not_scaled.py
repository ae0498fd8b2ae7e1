# Corpus: the micro-batch losses not scaled at all: about k times the large batch's gradient.
# %% ch03_accumulation_step points=0 feedback="not scaled"
def accumulation_step(model, optimizer, loss_fn, micro_batches):
    optimizer.zero_grad()
    total, count = 0.0, 0
    for x, y in micro_batches:
        loss = loss_fn(model(x), y)
        loss.backward()
        total += loss.item() * len(y)
        count += len(y)
    optimizer.step()
    return total / count
