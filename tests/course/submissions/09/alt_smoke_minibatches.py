# Corpus: another correct smoke check: state saved to memory with torch.save and loaded back,
# gradients judged by their norms, the step by the optimizer holding each parameter, and the 16
# samples learned in shuffled minibatches of 8.
# %% ch09_smoke_check points=3 feedback=passed
import io


def smoke_check(model, train_ds, optimizer, loss_fn):
    buffer = io.BytesIO()
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, buffer)
    was_training = {name: m.training for name, m in model.named_modules()}
    sixteen = torch.utils.data.Subset(train_ds, range(16))
    found = []
    try:
        model.train()
        inputs, targets = next(iter(DataLoader(sixteen, batch_size=16)))
        optimizer.zero_grad()
        loss = loss_fn(model(inputs), targets)
        if loss.requires_grad:
            loss.backward()
        norms = [0.0 if p.grad is None else p.grad.norm().item() for p in model.parameters()]
        if min(norms) == 0.0:
            found.append("gradient")
        optimizer.step()
        held = [q for group in optimizer.param_groups for q in group["params"]]
        if any(all(q is not p for q in held) for p in model.parameters()):
            found.append("step")
        loader = DataLoader(sixteen, batch_size=8, shuffle=True)
        for epoch in range(60):
            for inputs, targets in loader:
                optimizer.zero_grad()
                loss = loss_fn(model(inputs), targets)
                if loss.requires_grad:
                    loss.backward()
                optimizer.step()
        model.eval()
        with torch.no_grad():
            inputs, targets = next(iter(DataLoader(sixteen, batch_size=16)))
            if not torch.equal(model(inputs).argmax(1), targets):
                found.append("fit")
    finally:
        buffer.seek(0)
        saved = torch.load(buffer, weights_only=True)
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        for name, m in model.named_modules():
            m.train(was_training[name])
    return found
