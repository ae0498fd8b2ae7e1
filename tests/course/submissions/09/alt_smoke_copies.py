# Corpus: another correct smoke check: works on one deep copy of (model, optimizer) taken together
# (the copied optimizer then holds the copied model's parameters), reads the 16 samples through a
# DataLoader every step, calls "step" a parameter whose gradient is not negligible yet did not
# move, and trains a fixed 80 steps before one look in eval mode.
# %% ch09_smoke_check points=3 feedback=passed
def smoke_check(model, train_ds, optimizer, loss_fn):
    model, optimizer = copy.deepcopy((model, optimizer))  # the originals are never touched
    loader = DataLoader(torch.utils.data.Subset(train_ds, list(range(16))), batch_size=16)
    named = dict(model.named_parameters())
    problems = set()
    model.train()
    for step in range(80):
        inputs, targets = next(iter(loader))
        optimizer.zero_grad()
        loss = loss_fn(model(inputs), targets)
        if loss.grad_fn is not None:
            loss.backward()
        if step == 0:
            starts = {k: p.detach().clone() for k, p in named.items()}
            if any(p.grad is None or p.grad.abs().max() == 0 for p in named.values()):
                problems.add("gradient")
        optimizer.step()
        if step == 0:  # a parameter with a real gradient that the step left as it was
            scale = max([p.grad.abs().max() for p in named.values() if p.grad is not None],
                        default=0.0)
            if any(torch.equal(starts[k], p) and p.grad is not None
                   and p.grad.abs().max() > 1e-4 * scale for k, p in named.items()):
                problems.add("step")
    model.eval()
    with torch.no_grad():
        inputs, targets = next(iter(loader))
        if (model(inputs).argmax(dim=-1) != targets).any():
            problems.add("fit")
    return sorted(problems)
