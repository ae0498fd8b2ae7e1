# Corpus: the micro-batches glued back into the large batch: exact, but it defeats the purpose.
# %% ch03_accumulation_step points=0 feedback="concatenated"
def accumulation_step(model, optimizer, loss_fn, micro_batches):
    inputs = torch.cat([x for x, _ in micro_batches])
    targets = torch.cat([y for _, y in micro_batches])
    optimizer.zero_grad()
    loss = loss_fn(model(inputs), targets)
    loss.backward()
    optimizer.step()
    return loss.item()
