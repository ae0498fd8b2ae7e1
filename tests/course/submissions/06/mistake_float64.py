# Corpus: statistics kept in the dtype they came in: float64 tensors stay float64 in the state dict.
# %% ch06_standardize points=0 feedback="float32"
class Standardize(nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        mean, std = torch.as_tensor(mean).clone(), torch.as_tensor(std).clone()
        if mean.shape != std.shape or (std <= 0).any():
            raise ValueError("bad statistics")
        self.register_buffer("mean", mean)
        self.register_buffer("std", std)

    def forward(self, x):
        return (x - self.mean.view(1, -1, 1, 1)) / self.std.view(1, -1, 1, 1)
