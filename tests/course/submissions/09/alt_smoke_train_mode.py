# Corpus: another correct smoke check: the 16 samples judged in train mode, on the very batch each
# step trains on (no separate read, no eval mode), for up to 150 steps; a set for the names.
# %% ch09_smoke_check points=3 feedback=passed
def smoke_check(model, train_ds, optimizer, loss_fn):
    memo = copy.deepcopy({"model": model.state_dict(), "optimizer": optimizer.state_dict()})
    modes = {name: m.training for name, m in model.named_modules()}
    picked = list(range(len(train_ds)))[-16:]
    problems = set()

    def step():
        pairs = [train_ds[i] for i in picked]
        inputs = torch.stack([x for x, _ in pairs])
        targets = torch.tensor([int(y) for _, y in pairs])
        optimizer.zero_grad()
        outputs = model(inputs)
        loss = loss_fn(outputs, targets)
        if loss.requires_grad:
            loss.backward()
        optimizer.step()
        return bool((outputs.argmax(dim=1) == targets).all())

    try:
        model.train()
        step()
        if any(p.grad is None or p.grad.abs().sum() == 0 for p in model.parameters()):
            problems.add("gradient")
        owned = [p for group in optimizer.param_groups for p in group["params"]]
        if any(all(p is not q for q in owned) for p in model.parameters()):
            problems.add("step")
        if not any(step() for _ in range(150)):
            problems.add("fit")
    finally:
        model.load_state_dict(memo["model"])
        optimizer.load_state_dict(memo["optimizer"])
        optimizer.zero_grad()
        for name, m in model.named_modules():
            m.train(modes[name])
    return sorted(problems)
