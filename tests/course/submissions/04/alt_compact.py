# Corpus: a third correct style: a helper for the conv + batch norm pairs and a learned gain on
# the branch that starts at 0 (the block starts as the identity, and the gain learns first),
# zero_grad after each step, a tensor running total, the epoch stored as a tensor, the wrapping
# read from the keys' common prefix and PyTorch's strict load naming what does not fit;
# evaluate keeps every module's mode in a context manager.
# %% ch04_residual_block points=3 feedback=passed
def _conv_bn(cin, cout, kernel, stride=1):
    return [nn.Conv2d(cin, cout, kernel, stride=stride, padding=kernel // 2, bias=False),
            nn.BatchNorm2d(cout)]


class ResidualBlock(nn.Module):
    def __init__(self, in_channels, out_channels, stride=1):
        super().__init__()
        self.branch = nn.Sequential(*_conv_bn(in_channels, out_channels, 3, stride), nn.ReLU(),
                                    *_conv_bn(out_channels, out_channels, 3))
        self.gain = nn.Parameter(torch.zeros(()))  # one learned scale on the branch, from 0
        same = (in_channels, stride) == (out_channels, 1)
        self.shortcut = nn.Identity() if same else nn.Sequential(
            *_conv_bn(in_channels, out_channels, 1, stride))

    def forward(self, x):
        return self.shortcut(x) + self.gain * self.branch(x)
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
import contextlib


@contextlib.contextmanager
def measuring(model):
    saved = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        with torch.no_grad():
            yield
    finally:
        for m, flag in saved:
            m.training = flag


def evaluate(model, loader, loss_fn, device):
    total_loss = 0.0
    correct = 0
    with measuring(model):
        for inputs, targets in loader:
            inputs, targets = inputs.to(device), targets.to(device)
            logits = model(inputs)
            total_loss += loss_fn(logits, targets).item() * len(inputs)
            correct += (logits.max(dim=1).indices == targets).sum().item()
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
# %% ch04_load_unwrapped points=2 feedback=passed
import os


def load_unwrapped(model, state_dict):
    own = set(model.state_dict())
    common = os.path.commonprefix(list(state_dict))
    candidates = [""]
    while True:
        longer = [candidates[-1] + w for w in ("module.", "_orig_mod.")
                  if common.startswith(candidates[-1] + w)]
        if not longer:
            break
        candidates.append(longer[0])
    fitting = [p for p in candidates if {k[len(p):] for k in state_dict} == own]
    prefix = fitting[0] if fitting else max(
        candidates, key=lambda p: len({k[len(p):] for k in state_dict} & own)
    )
    model.load_state_dict({k[len(prefix):]: v for k, v in state_dict.items()})  # strict names them
