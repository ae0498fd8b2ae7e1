# Corpus: sizes rounded up after pooling (right for 28x28 only by luck); buffers registered with
# persistent=False, so a checkpoint does not carry the statistics.
# %% ch06_make_cnn points=0 feedback="rounds up after pooling"
import math


def make_cnn(image_size, in_channels=1, num_classes=10):
    h, w = (math.ceil((math.ceil(s / 2) - 2) / 2) for s in image_size)
    if h < 1 or w < 1:
        raise ValueError(f"image_size {image_size} is too small")
    model = SmallCNN(in_channels, num_classes)
    model.classifier[1] = nn.Linear(32 * h * w, num_classes)
    return model
# %% ch06_standardize points=0 feedback="state_dict() is empty"
class Standardize(nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        mean = torch.tensor(mean, dtype=torch.float32)
        std = torch.tensor(std, dtype=torch.float32)
        if mean.shape != std.shape or (std <= 0).any():
            raise ValueError("bad statistics")
        self.register_buffer("mean", mean, persistent=False)
        self.register_buffer("std", std, persistent=False)

    def forward(self, x):
        return (x - self.mean.view(1, -1, 1, 1)) / self.std.view(1, -1, 1, 1)
