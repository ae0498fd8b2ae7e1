# Corpus: the dry run's RuntimeError left to escape for too-small images; buffers stored already
# reshaped to (1, C, 1, 1).
# %% ch06_make_cnn points=0 feedback="raise a ValueError"
def make_cnn(image_size, in_channels=1, num_classes=10):
    model = SmallCNN(in_channels, num_classes)
    model.eval()
    with torch.no_grad():
        n = model.features(torch.zeros(1, in_channels, *image_size)).numel()
    model.train()
    model.classifier[1] = nn.Linear(n, num_classes)
    return model
# %% ch06_standardize points=0 feedback="float32 tensor of shape (C,)"
class Standardize(nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        mean = torch.tensor(mean, dtype=torch.float32)
        std = torch.tensor(std, dtype=torch.float32)
        if mean.shape != std.shape or (std <= 0).any():
            raise ValueError("bad statistics")
        self.register_buffer("mean", mean.view(1, -1, 1, 1))
        self.register_buffer("std", std.view(1, -1, 1, 1))

    def forward(self, x):
        return (x - self.mean) / self.std
