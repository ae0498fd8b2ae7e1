# Corpus: the last ReLU applied before the addition.
# %% ch04_residual_block points=0 feedback="after the addition"
class ResidualBlock(nn.Module):
    def __init__(self, in_channels, out_channels, stride=1):
        super().__init__()
        self.branch = nn.Sequential(
            nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=1, bias=False),
            nn.BatchNorm2d(out_channels), nn.ReLU(),
            nn.Conv2d(out_channels, out_channels, 3, padding=1, bias=False),
            nn.BatchNorm2d(out_channels), nn.ReLU(),
        )
        same = in_channels == out_channels and stride == 1
        self.shortcut = nn.Identity() if same else nn.Conv2d(in_channels, out_channels, 1, stride)

    def forward(self, x):
        return self.shortcut(x) + self.branch(x)
# %% ch04_train_one_epoch points=0 feedback="zero_grad"
def train_one_epoch(model, loader, optimizer, loss_fn, device):
    model.train()
    total, count = 0.0, 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(y)
        count += len(y)
    return total / count
