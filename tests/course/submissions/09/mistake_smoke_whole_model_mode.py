# Corpus: a learner's first answer on restoring modes: keeps model.training and calls
# model.train(was_training) at the end. A model that comes with a layer in the other mode
# (frozen batch norm, a backbone in eval) leaves with every layer in the model's mode.
# %% ch09_smoke_check points=0 feedback="each module's own"
def smoke_check(model, train_ds, optimizer, loss_fn):
    weights = copy.deepcopy(model.state_dict())
    opt_state = copy.deepcopy(optimizer.state_dict())
    was_training = model.training
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
        one_step()
        if any(p.grad is None or torch.count_nonzero(p.grad) == 0 for p in model.parameters()):
            problems.append("gradient")
        stepped = {id(p) for group in optimizer.param_groups for p in group["params"]}
        if any(id(p) not in stepped for p in model.parameters()):
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
        model.train(was_training)  # one flag for the whole model
    return problems
