# Corpus: checks that one optimizer step changes every parameter, exactly: plain SGD over a biased
# layer just before batch norm (whose gradient is rounding noise) leaves that bias bit for bit
# unchanged, so a sound setup is reported as "step".
# %% ch09_smoke_check points=0 feedback="need not move"
def smoke_check(model, train_ds, optimizer, loss_fn):
    weights = copy.deepcopy(model.state_dict())
    opt_state = copy.deepcopy(optimizer.state_dict())
    modes = [m.training for m in model.modules()]
    which = torch.randperm(len(train_ds))[:16].tolist()

    def read():  # every read goes through the dataset, like an epoch of training
        xs, ys = zip(*[train_ds[i] for i in which])
        return torch.stack(xs), torch.stack([torch.as_tensor(y) for y in ys])

    def one_step():
        x, y = read()
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        if loss.requires_grad:
            loss.backward()
        optimizer.step()

    problems = []
    try:
        model.train()
        old = [p.detach().clone() for p in model.parameters()]
        one_step()
        if any(p.grad is None or torch.count_nonzero(p.grad) == 0 for p in model.parameters()):
            problems.append("gradient")
        if any(torch.equal(a, p) for a, p in zip(old, model.parameters())):
            problems.append("step")
        learned = False
        for step in range(100):
            one_step()
            if step % 5 == 4:
                model.eval()
                with torch.no_grad():
                    x, y = read()
                    learned = bool((model(x).argmax(1) == y).all())
                model.train()
                if learned:
                    break
        if not learned:
            problems.append("fit")
    finally:
        model.load_state_dict(weights)
        optimizer.load_state_dict(opt_state)
        optimizer.zero_grad()
        for m, mode in zip(model.modules(), modes):
            m.train(mode)
    return problems
