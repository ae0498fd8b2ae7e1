# Corpus: other correct styles: NumPy averages (np.float64 results), a torchvision-style block
# (zero_init_residual: its last batch norm's scale zeroed, an in-place ReLU module, an empty
# nn.Sequential as identity, an in-place sum), an atomic save, a regular expression for the
# wrapper prefixes and load_state_dict(strict=False)'s report as an error.
# %% ch04_residual_block points=3 feedback=passed
class _Branch(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(cout, cout, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        nn.init.zeros_(self.bn2.weight)  # torchvision's zero_init_residual

    def forward(self, x):
        return self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x)))))


class ResidualBlock(nn.Module):
    def __init__(self, in_channels, out_channels, stride=1):
        super().__init__()
        self.branch = _Branch(in_channels, out_channels, stride)
        self.shortcut = nn.Sequential()  # an empty Sequential passes x on
        if stride != 1 or in_channels != out_channels:
            self.shortcut.append(nn.Conv2d(in_channels, out_channels, 1, stride, bias=False))
            self.shortcut.append(nn.BatchNorm2d(out_channels))

    def forward(self, x):
        out = self.branch(x)
        out += self.shortcut(x)
        return out
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
    flags = [m.training for m in model.modules()]
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
        for m, flag in zip(model.modules(), flags):
            m.train(flag)
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
# %% ch04_load_unwrapped points=2 feedback=passed
import re

_WRAPPER = re.compile(r"(?:module|_orig_mod)\.")


def load_unwrapped(model, state_dict):
    own = set(model.state_dict())
    renamed = dict(state_dict)
    while set(renamed) != own:
        heads = {m.group() if (m := _WRAPPER.match(k)) else None for k in renamed}
        if len(heads) != 1 or None in heads:
            break
        head = heads.pop()
        peeled = {k[len(head):]: v for k, v in renamed.items()}
        if len(own & set(peeled)) < len(own & set(renamed)):
            break  # a submodule called `module`, not a wrapper: peeling loses keys
        renamed = peeled
    report = model.load_state_dict(renamed, strict=False)
    if report.missing_keys or report.unexpected_keys:
        raise KeyError(f"missing={report.missing_keys} unexpected={report.unexpected_keys}")
