# Corpus: a learner's correct answers, written from the docstrings (the base of every other file).
# %% ch09_smoke_check points=3 feedback=passed
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
        for m, mode in zip(model.modules(), modes):
            m.train(mode)
    return problems
# %% ch09_train_classifier points=4 feedback=passed
def train_classifier(model, train_ds):
    loader = DataLoader(train_ds, batch_size=16, shuffle=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    epochs = 28
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs * len(loader))
    loss_fn = nn.CrossEntropyLoss()
    model.train()
    for epoch in range(epochs):
        for inputs, targets in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(inputs), targets)
            loss.backward()
            optimizer.step()
            scheduler.step()
    model.eval()
    return model
# %% ch09_train_resumable points=4 feedback=passed
def train_resumable(model, optimizer, train_ds, *, num_epochs, checkpoint_path):
    order = torch.Generator()
    order.manual_seed(1234)
    start = 0
    if Path(checkpoint_path).exists():
        saved = torch.load(checkpoint_path, weights_only=True)
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        order.set_state(saved["order"])
        torch.set_rng_state(saved["rng"])
        start = saved["epochs_done"]
    loader = DataLoader(train_ds, batch_size=16, shuffle=True, generator=order)
    loss_fn = nn.CrossEntropyLoss()
    model.train()
    for epoch in range(start, num_epochs):
        for inputs, targets in loader:
            optimizer.zero_grad()
            loss_fn(model(inputs), targets).backward()
            optimizer.step()
        torch.save(
            {
                "model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "order": order.get_state(),
                "rng": torch.get_rng_state(),
                "epochs_done": epoch + 1,
            },
            checkpoint_path,
        )
    return max(0, num_epochs - start)
# %% ch09_export_classifier points=3 feedback=passed
def export_classifier(model, example_inputs, path):
    was_training = {name: m.training for name, m in model.named_modules()}
    model.eval()
    batch = torch.export.Dim("batch")
    onnx_program = torch.onnx.export(
        model,
        (example_inputs,),
        dynamo=True,
        input_names=["images"],
        output_names=["logits"],
        dynamic_shapes=({0: batch},),
        verbose=False,
    )
    onnx_program.save(str(path))
    for name, m in model.named_modules():
        m.train(was_training[name])
