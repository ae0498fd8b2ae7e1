# Corpus: the right step, but the loss returned as a 0-d tensor (still attached to nothing
# useful) instead of a Python float.
# %% ch03_accumulation_step points=0 feedback="Python float"
def accumulation_step(model, optimizer, loss_fn, micro_batches):
    total = sum(len(y) for _, y in micro_batches)
    optimizer.zero_grad()
    loss_sum = torch.zeros(())
    for inputs, targets in micro_batches:
        loss = loss_fn(model(inputs), targets)
        (loss * len(targets) / total).backward()
        loss_sum += loss.detach() * len(targets)
    optimizer.step()
    return loss_sum / total
