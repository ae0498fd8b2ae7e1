# Corpus: a branch of 1x1 convolutions, to save parameters: right in every respect but one,
# the learned layers never look at a pixel's neighbours.
# %% ch04_residual_block points=0 feedback="a kernel_size=1 convolution sees one pixel"
class ResidualBlock(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, stride: int = 1) -> None:
        super().__init__()
        last_norm = nn.BatchNorm2d(out_channels)
        nn.init.constant_(last_norm.weight, 0.0)  # the branch adds nothing until it learns to
        self.branch = nn.Sequential(
            nn.Conv2d(in_channels, out_channels, 1, stride=stride, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(),
            nn.Conv2d(out_channels, out_channels, 1, bias=False),
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
