# Corpus: the branch computed, then overwritten by the shortcut (= where += was meant).
# %% ch04_residual_block points=0 feedback="is the branch used in forward"
class ResidualBlock(nn.Module):
    def __init__(self, in_channels, out_channels, stride=1):
        super().__init__()
        self.branch = nn.Sequential(
            nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=1, bias=False),
            nn.BatchNorm2d(out_channels), nn.ReLU(),
            nn.Conv2d(out_channels, out_channels, 3, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
        )
        same = in_channels == out_channels and stride == 1
        self.shortcut = nn.Identity() if same else nn.Conv2d(in_channels, out_channels, 1, stride)

    def forward(self, x):
        out = self.branch(x)
        out = self.shortcut(x)  # meant +=: the branch's result is overwritten
        return F.relu(out)
