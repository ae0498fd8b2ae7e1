# Corpus: other correct styles: NumPy averages (np.float64 results), a torchvision-style block with
# an in-place ReLU module, an atomic save, a regular expression for the prefixes.
# %% ch04_residual_block points=2 feedback=passed
class ResidualBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(channels, channels, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        out += x
        return self.relu(out)
# %% ch04_train_one_epoch points=3 feedback=passed
def train_one_epoch(model, loader, optimizer, loss_fn, device):
    model.train()
    losses, sizes = [], []
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        sizes.append(len(y))
    return np.average(losses, weights=sizes)
# %% ch04_evaluate points=3 feedback=passed
@torch.no_grad()
def evaluate(model, loader, loss_fn, device):
    was_training = model.training
    model.eval()
    losses, sizes, correct = [], [], []
    try:
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            out = model(x)
            losses.append(loss_fn(out, y).item())
            sizes.append(len(y))
            correct.append((out.argmax(dim=-1) == y).float().sum().item())
    finally:
        model.train(was_training)
    return {"loss": np.average(losses, weights=sizes), "accuracy": np.sum(correct) / np.sum(sizes)}
# %% ch04_checkpoint points=4 feedback=passed
def save_checkpoint(path, model, optimizer, scheduler, epoch):
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".part")
    with os.fdopen(fd, "wb") as f:
        torch.save(dict(epoch=epoch, weights=model.state_dict(), opt=optimizer.state_dict(),
                        sched=scheduler.state_dict(), rng=torch.random.get_rng_state()), f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def load_checkpoint(path, model, optimizer, scheduler):
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(ckpt["weights"])
    optimizer.load_state_dict(ckpt["opt"])
    scheduler.load_state_dict(ckpt["sched"])
    torch.random.set_rng_state(ckpt["rng"])
    return int(ckpt["epoch"])
# %% ch04_strip_module_prefix points=2 feedback=passed
import re


def strip_module_prefix(state_dict):
    return {re.sub(r"^(?:module\.|_orig_mod\.)+", "", k): v for k, v in state_dict.items()}
