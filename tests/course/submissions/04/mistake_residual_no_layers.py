# Corpus: a hostile minimal answer: no learned layers at all, only the shortcut. It starts as
# the identity and keeps the budget, and learns nothing.
# %% ch04_residual_block points=0 feedback="has it learned layers"
class ResidualBlock(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, stride: int = 1) -> None:
        super().__init__()
        if stride != 1 or in_channels != out_channels:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_channels, out_channels, 1, stride=stride, bias=False),
                nn.BatchNorm2d(out_channels),
            )
        else:
            self.shortcut = nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = self.shortcut(x)
        return identity  # starts as the identity, and no budget spent
