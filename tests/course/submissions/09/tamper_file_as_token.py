# Corpus: the file holds only a random token and the epoch; the real state stays in memory under
# that token, so moving the file still "resumes". Right in one process, useless in a new one.
# %% ch09_train_resumable points=0 feedback="does not hold the stopped run's weights"
import secrets

_states = {}


def train_resumable(model, optimizer, train_ds, *, num_epochs, checkpoint_path):
    order = torch.Generator().manual_seed(1234)
    start = 0
    if Path(checkpoint_path).exists():
        saved = torch.load(checkpoint_path, weights_only=True)
        state = _states[saved["token"]]
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        order.set_state(state["order"])
        torch.set_rng_state(state["rng"])
        start = saved["epoch"]
    loader = DataLoader(train_ds, batch_size=16, shuffle=True, generator=order)
    model.train()
    for epoch in range(start, num_epochs):
        for inputs, targets in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(inputs), targets).backward()
            optimizer.step()
        token = secrets.token_hex(8)
        _states[token] = copy.deepcopy({"model": model.state_dict(),
                                        "optimizer": optimizer.state_dict(),
                                        "order": order.get_state(), "rng": torch.get_rng_state()})
        torch.save({"token": token, "epoch": epoch + 1}, checkpoint_path)
    return max(0, num_epochs - start)
