# Corpus: the last convolution's weight zeroed instead of the scale after it, its default bias
# left in: batch norm removes the bias in train mode (the batch's mean), not in eval mode.
# %% ch04_residual_block points=0 feedback="in eval mode batch norm subtracts its running mean"
class ResidualBlock(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, stride: int = 1) -> None:
        super().__init__()
        last_conv = nn.Conv2d(out_channels, out_channels, 3, padding=1)
        nn.init.zeros_(last_conv.weight)  # the branch adds nothing until it learns to
        self.branch = nn.Sequential(
            nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(),
            last_conv,
            nn.BatchNorm2d(out_channels),
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
