# Corpus: layers kept in a plain Python list (never registered); bias left on the convolutions.
# %% ch04_residual_block points=0 feedback="nn.ModuleList"
class ResidualBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.layers = [
            nn.Conv2d(channels, channels, 3, padding=1, bias=False),
            nn.BatchNorm2d(channels),
            nn.Conv2d(channels, channels, 3, padding=1, bias=False),
            nn.BatchNorm2d(channels),
        ]

    def forward(self, x):
        conv1, bn1, conv2, bn2 = self.layers
        return F.relu(x + bn2(conv2(F.relu(bn1(conv1(x))))))
# %% ch04_strip_module_prefix points=0 feedback="got ['encoder.weight']"
def strip_module_prefix(state_dict):
    return {k.replace("module.", "").replace("_orig_mod.", ""): v for k, v in state_dict.items()}
