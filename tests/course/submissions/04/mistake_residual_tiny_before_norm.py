# Corpus: the last convolution scaled down to almost nothing instead of zero: batch norm in
# train mode divides by the batch's tiny spread and scales it back up (about 1e-4, not 0).
# %% ch04_residual_block points=0 feedback="the learned layers should add exactly nothing"
class ResidualBlock(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, stride: int = 1) -> None:
        super().__init__()
        last_conv = nn.Conv2d(out_channels, out_channels, 3, padding=1, bias=False)
        with torch.no_grad():
            last_conv.weight.mul_(1e-6)  # almost nothing at the start, and still learns
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
