# Corpus: one kind of shortcut everywhere, a 1x1 convolution started as the identity (dirac)
# where the channels match: the block starts as the identity, but learns in the shortcut
# where x already has the output's shape.
# %% ch04_residual_block points=0 feedback="it should learn only where the shape changes"
class ResidualBlock(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, stride: int = 1) -> None:
        super().__init__()
        last_norm = nn.BatchNorm2d(out_channels)
        nn.init.constant_(last_norm.weight, 0.0)  # the branch adds nothing until it learns to
        self.branch = nn.Sequential(
            nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(),
            nn.Conv2d(out_channels, out_channels, 3, padding=1, bias=False),
            last_norm,
        )
        # one kind of shortcut everywhere: a 1x1 convolution, started as the identity where it can
        self.shortcut = nn.Conv2d(in_channels, out_channels, 1, stride=stride, bias=False)
        if in_channels == out_channels:
            nn.init.dirac_(self.shortcut.weight)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = self.shortcut(x)
        y = self.branch(x)
        return y + identity
