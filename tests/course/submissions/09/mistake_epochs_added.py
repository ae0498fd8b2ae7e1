# Corpus: reads num_epochs as "epochs to add": a resumed call trains num_epochs more.
# %% ch09_train_resumable points=0 feedback="num_epochs is the total"
def train_resumable(model, optimizer, train_ds, *, num_epochs, checkpoint_path):
    order = torch.Generator().manual_seed(1234)
    start = 0
    if Path(checkpoint_path).exists():
        saved = torch.load(checkpoint_path, weights_only=True)
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        order.set_state(saved["order"])
        torch.set_rng_state(saved["rng"])
        start = saved["epochs_done"]
    loader = DataLoader(train_ds, batch_size=16, shuffle=True, generator=order)
    model.train()
    for epoch in range(start, start + num_epochs):
        for inputs, targets in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(inputs), targets).backward()
            optimizer.step()
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "order": order.get_state(), "rng": torch.get_rng_state(),
                    "epochs_done": epoch + 1}, checkpoint_path)
    return num_epochs
