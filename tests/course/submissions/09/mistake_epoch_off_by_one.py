# Corpus: saves the index of the epoch just finished (0-based) as the epoch to resume from: the
# resumed call trains that epoch again.
# %% ch09_train_resumable points=0 feedback="one epoch too many"
def train_resumable(model, optimizer, train_ds, *, num_epochs, checkpoint_path):
    order = torch.Generator().manual_seed(1234)
    start = 0
    if Path(checkpoint_path).exists():
        saved = torch.load(checkpoint_path, weights_only=True)
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        order.set_state(saved["order"])
        torch.set_rng_state(saved["rng"])
        start = saved["epoch"]
    loader = DataLoader(train_ds, batch_size=16, shuffle=True, generator=order)
    model.train()
    for epoch in range(start, num_epochs):
        for inputs, targets in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(inputs), targets).backward()
            optimizer.step()
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "order": order.get_state(), "rng": torch.get_rng_state(),
                    "epoch": epoch}, checkpoint_path)
    return num_epochs - start
