# Corpus: nn.LazyLinear returned before any forward (parameters without a shape); statistics kept
# as the plain attributes of PlainStandardize (they do not follow .to()).
# %% ch06_make_cnn points=0 feedback="no shape yet"
def make_cnn(image_size, in_channels=1, num_classes=10):
    model = SmallCNN(in_channels, num_classes)
    model.classifier[1] = nn.LazyLinear(num_classes)
    return model
# %% ch06_standardize points=0 feedback="did not move with the module"
class Standardize(nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        if len(mean) != len(std) or min(float(s) for s in std) <= 0:
            raise ValueError("bad statistics")
        self.mean = torch.tensor(mean, dtype=torch.float32)
        self.std = torch.tensor(std, dtype=torch.float32)

    def forward(self, x):
        return (x - self.mean.view(1, -1, 1, 1)) / self.std.view(1, -1, 1, 1)
