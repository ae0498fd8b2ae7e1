# Corpus: the inverse transform by mistake: x * std + mean (what turns standardized images back).
# %% ch06_standardize points=0 feedback="differs from (x - mean) / std"
class Standardize(nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        mean = torch.as_tensor(mean, dtype=torch.float32).clone()
        std = torch.as_tensor(std, dtype=torch.float32).clone()
        if mean.shape != std.shape:
            raise ValueError(f"{len(mean)} means but {len(std)} stds")
        if (std <= 0).any():
            raise ValueError(f"std must be positive, got {std.tolist()}")
        self.register_buffer("mean", mean)
        self.register_buffer("std", std)

    def forward(self, x):
        return x * self.std.view(1, -1, 1, 1) + self.mean.view(1, -1, 1, 1)
