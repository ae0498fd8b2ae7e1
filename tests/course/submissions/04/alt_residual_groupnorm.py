# Corpus: another correct block: pre-activation (GroupNorm and ReLU before each convolution, so
# nothing follows the sum), the last convolution's weight and bias zeroed, and a shortcut that
# averages 2x2 windows (ceil_mode, for odd sizes) and adds a 1x1 convolution only where the
# channels change.
# %% ch04_residual_block points=3 feedback=passed
class ResidualBlock(nn.Module):
    """Pre-activation: normalise and activate first, so nothing follows the sum."""

    def __init__(self, in_channels, out_channels, stride=1):
        super().__init__()
        last = nn.Conv2d(out_channels, out_channels, 3, padding=1)
        nn.init.zeros_(last.weight)
        nn.init.zeros_(last.bias)
        self.branch = nn.Sequential(
            nn.GroupNorm(1, in_channels), nn.ReLU(),
            nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=1),
            nn.GroupNorm(1, out_channels), nn.ReLU(),
            last,
        )
        parts = []
        if stride > 1:  # ceil_mode: 5 rows give 3, like the strided convolution
            parts.append(nn.AvgPool2d(stride, ceil_mode=True))
        if in_channels != out_channels:
            parts.append(nn.Conv2d(in_channels, out_channels, 1, bias=False))
        self.shortcut = nn.Sequential(*parts)

    def forward(self, x):
        return self.shortcut(x) + self.branch(x)
