# Corpus: the classic accumulation bug (the former reference): each micro-batch weighted by its
# rows, len(targets), so padded targets still count; right without padding, wrong with it.
# %% ch03_accumulation_step points=0 feedback="ignore_index (here -100:"
def accumulation_step(model, optimizer, loss_fn, micro_batches):
    n_total = sum(len(targets) for _, targets in micro_batches)
    optimizer.zero_grad()
    running = 0.0
    for inputs, targets in micro_batches:
        loss = loss_fn(model(inputs), targets)
        share = 1.0 if loss_fn.reduction == "sum" else len(targets) / n_total
        (loss * share).backward()
        running += loss.item() * share
    optimizer.step()
    return running
