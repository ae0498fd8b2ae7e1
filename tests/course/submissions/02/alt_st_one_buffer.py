# Corpus: one (2, F) buffer for both statistics, float32 from NumPy; predict with tensor(...) and no_grad as a decorator: full marks.
# %% ch02_standardized points=3 feedback=passed
import numpy


class Standardized(nn.Module):
    def __init__(self, mean, std, num_classes: int):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(len(mean), 16), nn.ReLU(), nn.Linear(16, num_classes))
        stats = numpy.stack([numpy.asarray(mean, dtype=numpy.float32),
                             numpy.asarray(std, dtype=numpy.float32)])
        self.register_buffer("stats", torch.from_numpy(stats))

    def forward(self, x):
        mean, std = self.stats
        return self.net(torch.div(torch.sub(x, mean), std))


@torch.no_grad()
def predict(model, features):
    w = next(model.parameters())
    x = torch.tensor(features, dtype=w.dtype, device=w.device)
    return model(x).max(dim=1).indices
