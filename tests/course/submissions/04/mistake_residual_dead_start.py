# Corpus: to be doubly sure, both the last convolution and the scale after it zeroed: the
# block starts as the identity and never leaves it (each zero blocks the other's gradient).
# %% ch04_residual_block points=0 feedback="got no gradient at all"
class ResidualBlock(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, stride: int = 1) -> None:
        super().__init__()
        last_norm = nn.BatchNorm2d(out_channels)
        nn.init.constant_(last_norm.weight, 0.0)  # the branch adds nothing until it learns to
        last_conv = nn.Conv2d(out_channels, out_channels, 3, padding=1, bias=False)
        nn.init.zeros_(last_conv.weight)  # twice sure
        self.branch = nn.Sequential(
            nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(),
            last_conv,
            last_norm,
        )
        if stride != 1 or in_channels != out_channels:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_channels, out_channels, 1, stride=stride, bias=False),
                nn.BatchNorm2d(out_channels),
            )
        else:
            self.shortcut = nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = self.shortcut(x)
        y = self.branch(x)
        return y + identity
