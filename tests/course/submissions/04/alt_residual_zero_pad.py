# Corpus: another correct block: the ResNet paper's option A shortcut, no parameters at all
# (every second pixel, channels padded with zeros), a learned 1x1 projection only where there
# are fewer channels out than in; plain attributes instead of a branch module.
# %% ch04_residual_block points=3 feedback=passed
class _Subsample(nn.Module):
    """The paper's option A: every stride-th pixel, channels padded with zeros; nothing to learn."""

    def __init__(self, stride, extra):
        super().__init__()
        self.stride, self.extra = stride, extra

    def forward(self, x):
        return F.pad(x[:, :, ::self.stride, ::self.stride], (0, 0, 0, 0, 0, self.extra))


class ResidualBlock(nn.Module):
    def __init__(self, in_channels, out_channels, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.bn2.weight.data.zero_()
        if out_channels < in_channels:  # fewer channels cannot be padded: learn a projection
            self.shortcut = nn.Conv2d(in_channels, out_channels, 1, stride, bias=False)
        else:
            self.shortcut = _Subsample(stride, out_channels - in_channels)

    def forward(self, x):
        return self.shortcut(x) + self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
