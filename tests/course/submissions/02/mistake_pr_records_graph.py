# Corpus: predict runs the model with autograd recording (detach at the end instead of no_grad).
# %% ch02_standardized points=0 feedback="recording a graph"
class Standardized(nn.Module):
    def __init__(self, mean, std, num_classes: int):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(len(mean), 16), nn.ReLU(), nn.Linear(16, num_classes))
        self.register_buffer("mean", torch.as_tensor(mean, dtype=torch.float32))
        self.register_buffer("std", torch.as_tensor(std, dtype=torch.float32))

    def forward(self, x):
        return self.net((x - self.mean) / self.std)


def predict(model, features):
    p = next(model.parameters())
    x = torch.from_numpy(features).to(device=p.device, dtype=p.dtype)
    return model(x).detach().argmax(dim=1)
