# Corpus: the statistics moved to the input in every forward: any device and dtype, but not in the state_dict.
# %% ch02_standardized points=0 feedback="state_dict"
class Standardized(nn.Module):
    def __init__(self, mean, std, num_classes: int):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(len(mean), 16), nn.ReLU(), nn.Linear(16, num_classes))
        self.mean = torch.as_tensor(mean, dtype=torch.float32)
        self.std = torch.as_tensor(std, dtype=torch.float32)

    def forward(self, x):
        return self.net((x - self.mean.to(x)) / self.std.to(x))


def predict(model, features):
    p = next(model.parameters())
    x = torch.from_numpy(features).to(device=p.device, dtype=p.dtype)
    with torch.no_grad():
        return model(x).argmax(dim=1)
