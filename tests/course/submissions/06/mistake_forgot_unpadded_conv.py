# Corpus: the original bug in formula form (halving twice, the unpadded convolution forgotten);
# a Parameter with requires_grad=False for the statistics: moves with .to(), but is a parameter.
# %% ch06_make_cnn points=0 feedback="mat1 and mat2 shapes cannot be multiplied"
def make_cnn(image_size, in_channels=1, num_classes=10):
    h, w = image_size
    model = SmallCNN(in_channels, num_classes)
    model.classifier[1] = nn.Linear(32 * (h // 4) * (w // 4), num_classes)
    return model
# %% ch06_standardize points=0 feedback="the statistics are parameters"
class Standardize(nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        if len(mean) != len(std) or min(float(s) for s in std) <= 0:
            raise ValueError("bad statistics")
        self.mean = nn.Parameter(torch.tensor(mean, dtype=torch.float32), requires_grad=False)
        self.std = nn.Parameter(torch.tensor(std, dtype=torch.float32), requires_grad=False)

    def forward(self, x):
        return (x - self.mean.view(1, -1, 1, 1)) / self.std.view(1, -1, 1, 1)
