# Corpus: a third correct style: a helper method for the residual branch, zero_grad after each
# step, a tensor running total, the epoch stored as a tensor, a recursive prefix stripper.
# %% ch04_residual_block points=2 feedback=passed
class ResidualBlock(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        conv = lambda: nn.Conv2d(channels, channels, 3, padding=1, bias=False)  # noqa: E731
        self.conv1, self.bn1 = conv(), nn.BatchNorm2d(channels)
        self.conv2, self.bn2 = conv(), nn.BatchNorm2d(channels)

    def branch(self, x):
        return self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))

    def forward(self, x):
        return F.relu(self.branch(x) + x)
# %% ch04_train_one_epoch points=3 feedback=passed
def train_one_epoch(model, loader, optimizer, loss_fn, device):
    model.train()
    optimizer.zero_grad()
    total, n = torch.zeros(()), 0
    for batch in loader:
        inputs, targets = (t.to(device) for t in batch)
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        total += loss.detach().cpu() * len(targets)
        n += len(targets)
    return (total / n).item()
# %% ch04_evaluate points=3 feedback=passed
def evaluate(model, loader, loss_fn, device):
    before = model.training
    model.eval()
    total_loss = 0.0
    correct = 0
    with torch.no_grad():
        for inputs, targets in loader:
            inputs, targets = inputs.to(device), targets.to(device)
            logits = model(inputs)
            total_loss += loss_fn(logits, targets).item() * len(inputs)
            correct += (logits.max(dim=1).indices == targets).sum().item()
    model.train(before)
    n = len(loader.dataset)
    return dict(loss=total_loss / n, accuracy=correct / n)
# %% ch04_checkpoint points=4 feedback=passed
def save_checkpoint(path, model, optimizer, scheduler, epoch):
    torch.save({"epoch": torch.tensor(epoch), "model": model.state_dict(),
                "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
                "rng": torch.get_rng_state()}, os.fspath(path))


def load_checkpoint(path, model, optimizer, scheduler):
    ckpt = torch.load(os.fspath(path))
    for obj in ("model", "optimizer", "scheduler"):
        locals()[obj].load_state_dict(ckpt[obj])
    torch.set_rng_state(ckpt["rng"])
    return int(ckpt["epoch"].item())
# %% ch04_strip_module_prefix points=2 feedback=passed
def _strip(key):
    for prefix in ("module.", "_orig_mod."):
        if key.startswith(prefix):
            return _strip(key[len(prefix):])
    return key


def strip_module_prefix(state_dict):
    return {_strip(key): value for key, value in state_dict.items()}
