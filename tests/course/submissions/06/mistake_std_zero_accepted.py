# Corpus: only negative standard deviations refused: a zero one is accepted (and divides by zero).
# %% ch06_standardize points=0 feedback="a zero std should raise ValueError"
class Standardize(nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        mean = torch.as_tensor(mean, dtype=torch.float32).clone()
        std = torch.as_tensor(std, dtype=torch.float32).clone()
        if mean.shape != std.shape:
            raise ValueError(f"{len(mean)} means but {len(std)} stds")
        if (std < 0).any():
            raise ValueError(f"std must not be negative, got {std.tolist()}")
        self.register_buffer("mean", mean)
        self.register_buffer("std", std)

    def forward(self, x):
        return (x - self.mean.view(1, -1, 1, 1)) / self.std.view(1, -1, 1, 1)
