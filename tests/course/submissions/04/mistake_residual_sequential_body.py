# Corpus: the right computation under torchvision's names (body, downsample), not the
# docstring's, so nothing can find the shortcut.
# %% ch04_residual_block points=0 feedback="block.shortcut is not a registered module"
class ResidualBlock(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, stride: int = 1) -> None:
        super().__init__()
        last_norm = nn.BatchNorm2d(out_channels)
        nn.init.constant_(last_norm.weight, 0.0)  # the branch adds nothing until it learns to
        self.body = nn.Sequential(
            nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(),
            nn.Conv2d(out_channels, out_channels, 3, padding=1, bias=False),
            last_norm,
        )
        if stride != 1 or in_channels != out_channels:
            self.downsample = nn.Sequential(
                nn.Conv2d(in_channels, out_channels, 1, stride=stride, bias=False),
                nn.BatchNorm2d(out_channels),
            )
        else:
            self.downsample = nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = self.downsample(x)
        y = self.body(x)
        return y + identity
