# Corpus: in_features by the size formula, statistics indexed in forward, losses kept as detached
# tensors and validation outputs concatenated under inference_mode.
# %% ch06_make_cnn points=4 feedback=passed
def make_cnn(image_size: tuple[int, int], in_channels: int = 1, num_classes: int = 10) -> nn.Module:
    def after(size):
        size = (size + 2 * 1 - 3) // 1 + 1  # conv 3x3, padding 1
        size = size // 2  # pool
        size = size - 3 + 1  # conv 3x3, no padding
        return size // 2  # pool

    height, width = (after(s) for s in image_size)
    if height < 1 or width < 1 or min(image_size) < 1:
        raise ValueError(f"image_size {image_size} is too small: the features would be empty")
    model = SmallCNN(in_channels, num_classes)
    model.classifier[1] = nn.Linear(32 * height * width, num_classes)
    return model
# %% ch06_standardize points=3 feedback=passed
class Standardize(nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        if len(mean) != len(std):
            raise ValueError(f"{len(mean)} means but {len(std)} stds")
        if any(float(s) <= 0 for s in std):
            raise ValueError("standard deviations must be > 0")
        self.register_buffer("mean", torch.as_tensor(mean).float().clone())
        self.register_buffer("std", torch.as_tensor(std).float().clone())

    def forward(self, x):
        return x.sub(self.mean[:, None, None]).div(self.std[:, None, None])
# %% ch06_train_and_validate points=5 feedback=passed
def train_and_validate(model, train_loader, val_loader, optimizer, loss_fn, device):
    model.train()
    total = torch.zeros((), device=device)
    seen = 0
    for x, y in train_loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.detach() * len(y)
        seen += len(y)
    model.eval()
    outs, ys = [], []
    with torch.inference_mode():
        for x, y in val_loader:
            outs.append(model(x.to(device)))
            ys.append(y.to(device))
        outputs, targets = torch.cat(outs), torch.cat(ys)
        val_loss = loss_fn(outputs, targets).item()
        accuracy = (outputs.argmax(dim=1) == targets).float().mean().item()
    model.train()
    return {"train_loss": (total / seen).item(), "val_loss": val_loss, "val_accuracy": accuracy}
