# Corpus: the branch's layers kept in a plain Python list (never registered); wrapper names
# removed anywhere in a key with str.replace.
# %% ch04_residual_block points=0 feedback="is not a registered module"
class ResidualBlock(nn.Module):
    def __init__(self, in_channels, out_channels, stride=1):
        super().__init__()
        self.branch = [
            nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.Conv2d(out_channels, out_channels, 3, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
        ]
        same = in_channels == out_channels and stride == 1
        self.shortcut = nn.Identity() if same else nn.Conv2d(in_channels, out_channels, 1, stride)

    def forward(self, x):
        conv1, bn1, conv2, bn2 = self.branch
        return F.relu(self.shortcut(x) + bn2(conv2(F.relu(bn1(conv1(x))))))
# %% ch04_load_unwrapped points=0 feedback="not a wrapper's when the model has a submodule"
def load_unwrapped(model, state_dict):
    model.load_state_dict(
        {k.replace("module.", "").replace("_orig_mod.", ""): v for k, v in state_dict.items()}
    )
