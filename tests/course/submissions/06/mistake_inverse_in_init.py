# Corpus: 1/std precomputed in __init__ as a buffer that is not saved: after load_state_dict the
# module still divides by the old statistics.
# %% ch06_standardize points=0 feedback="still computes with its old statistics"
class Standardize(nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        mean = torch.tensor(mean, dtype=torch.float32)
        std = torch.tensor(std, dtype=torch.float32)
        if mean.shape != std.shape or (std <= 0).any():
            raise ValueError("bad statistics")
        self.register_buffer("mean", mean)
        self.register_buffer("std", std)
        self.register_buffer("inv_std", 1.0 / std, persistent=False)  # faster: multiply

    def forward(self, x):
        return (x - self.mean.view(1, -1, 1, 1)) * self.inv_std.view(1, -1, 1, 1)
