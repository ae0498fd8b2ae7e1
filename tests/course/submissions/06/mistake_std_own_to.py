# Corpus: plain tensor attributes and an overridden .to() that moves them: the visible .to('meta')
# passes, but .double() does not go through .to(), and state_dict() never sees them.
# %% ch06_standardize points=0 feedback="state_dict() is empty"
class Standardize(nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        self.mean = torch.as_tensor(mean, dtype=torch.float32).clone()
        self.std = torch.as_tensor(std, dtype=torch.float32).clone()
        if self.mean.shape != self.std.shape:
            raise ValueError(f"{len(self.mean)} means but {len(self.std)} stds")
        if (self.std <= 0).any():
            raise ValueError(f"std must be positive, got {self.std.tolist()}")

    def to(self, *args, **kwargs):
        self.mean = self.mean.to(*args, **kwargs)
        self.std = self.std.to(*args, **kwargs)
        return super().to(*args, **kwargs)

    def forward(self, x):
        return (x - self.mean.view(1, -1, 1, 1)) / self.std.view(1, -1, 1, 1)
