# Corpus: "resumes" from a dictionary in memory instead of the file (which holds only the epoch):
# the moved checkpoint of the stopped run has no entry, and the newest entry is another run's.
# %% ch09_train_resumable points=0 feedback="load the checkpoint's weights"
_memory = {}


def train_resumable(model, optimizer, train_ds, *, num_epochs, checkpoint_path):
    start = 0
    if Path(checkpoint_path).exists() and "last" in _memory:
        saved = _memory["last"]
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        torch.set_rng_state(saved["rng"])
        start = torch.load(checkpoint_path, weights_only=True)["epoch"]
    loader = DataLoader(train_ds, batch_size=16, shuffle=True)
    model.train()
    for epoch in range(start, num_epochs):
        for inputs, targets in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(inputs), targets).backward()
            optimizer.step()
        _memory["last"] = copy.deepcopy({"model": model.state_dict(),
                                         "optimizer": optimizer.state_dict(),
                                         "rng": torch.get_rng_state()})
        torch.save({"epoch": epoch + 1}, checkpoint_path)
    return max(0, num_epochs - start)
