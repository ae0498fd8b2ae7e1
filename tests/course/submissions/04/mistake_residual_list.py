# Corpus: the branch's layers kept in a plain Python list (never registered: the block that
# keeps the shape has no parameters at all); wrapper names removed anywhere in a key with
# str.replace.
# %% ch04_residual_block points=0 feedback="are they registered"
class ResidualBlock(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, stride: int = 1) -> None:
        super().__init__()
        last_norm = nn.BatchNorm2d(out_channels)
        nn.init.constant_(last_norm.weight, 0.0)  # the branch adds nothing until it learns to
        self.layers = [
            nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(),
            nn.Conv2d(out_channels, out_channels, 3, padding=1, bias=False),
            last_norm,
        ]
        if stride != 1 or in_channels != out_channels:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_channels, out_channels, 1, stride=stride, bias=False),
                nn.BatchNorm2d(out_channels),
            )
        else:
            self.shortcut = nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = self.shortcut(x)
        y = x
        for layer in self.layers:
            y = layer(y)
        return y + identity
# %% ch04_load_unwrapped points=0 feedback="not a wrapper's when the model has a submodule"
def load_unwrapped(model, state_dict):
    model.load_state_dict(
        {k.replace("module.", "").replace("_orig_mod.", ""): v for k, v in state_dict.items()}
    )
