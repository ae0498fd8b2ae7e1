# Corpus: the ReLU between the two convolutions left out: f(x) = bn2(conv2(bn1(conv1(x)))).
# %% ch04_residual_block points=0 feedback="the output differs from a reference block"
class ResidualBlock(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x
        y = self.bn1(self.conv1(x))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + identity)
