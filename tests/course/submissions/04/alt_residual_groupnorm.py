# Corpus: another correct block: GroupNorm (a choice that suits small batches), convolutions with
# their default bias, no ReLU inside the branch, and a projection that is a plain 1x1 convolution.
# %% ch04_residual_block points=2 feedback=passed
class ResidualBlock(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, stride: int = 1) -> None:
        super().__init__()
        self.branch = nn.Sequential(
            nn.Conv2d(in_channels, out_channels, 3, stride, 1),
            nn.GroupNorm(1, out_channels),
            nn.Conv2d(out_channels, out_channels, 3, 1, 1),
            nn.GroupNorm(1, out_channels),
        )
        needs_projection = in_channels != out_channels or stride > 1
        self.shortcut = (
            nn.Conv2d(in_channels, out_channels, 1, stride) if needs_projection else nn.Identity()
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.shortcut(x) + self.branch(x))
