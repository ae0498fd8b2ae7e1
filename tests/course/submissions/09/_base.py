# Corpus: a learner's correct answers, written from the docstrings (the base of every other file).
# %% ch09_train_classifier points=4 feedback=passed
def train_classifier(model, train_ds):
    loader = DataLoader(train_ds, batch_size=32, shuffle=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
    loss_fn = nn.CrossEntropyLoss()
    model.train()
    for epoch in range(12):
        for inputs, targets in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(inputs), targets)
            loss.backward()
            optimizer.step()
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
