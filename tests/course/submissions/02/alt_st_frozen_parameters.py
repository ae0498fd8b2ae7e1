# Corpus: statistics kept as frozen nn.Parameters, predict under inference_mode with Tensor.to(other): full marks.
# %% ch02_standardized points=3 feedback=passed
class Standardized(nn.Module):
    def __init__(self, mean, std, num_classes: int):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(len(mean), 16), nn.ReLU(), nn.Linear(16, num_classes))
        self.mean = nn.Parameter(torch.as_tensor(mean).float(), requires_grad=False)
        self.std = nn.Parameter(torch.as_tensor(std).float(), requires_grad=False)

    def forward(self, x):
        centred = x - self.mean
        return self.net(centred / self.std)


def predict(model, features):
    reference = next(iter(model.parameters()))
    with torch.inference_mode():
        inputs = torch.as_tensor(features).to(reference)  # device and dtype of the weights
        return torch.argmax(model(inputs), dim=-1)
