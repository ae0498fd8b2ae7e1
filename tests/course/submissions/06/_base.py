# Corpus: a learner's correct answers, written from the docstrings (the base of every other file).
# %% ch06_make_cnn points=4 feedback=passed
def make_cnn(image_size, in_channels=1, num_classes=10):
    model = SmallCNN(in_channels, num_classes)
    dummy = torch.zeros(1, in_channels, image_size[0], image_size[1])
    model.eval()  # batch norm must not count the dummy batch
    try:
        with torch.no_grad():
            flat = model.features(dummy).flatten(1).shape[1]
    except RuntimeError as err:
        raise ValueError(f"images of size {image_size} are too small for this network") from err
    finally:
        model.train()
    model.classifier[1] = nn.Linear(flat, num_classes)
    return model
# %% ch06_standardize points=3 feedback=passed
class Standardize(nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        mean = torch.tensor(mean, dtype=torch.float32)
        std = torch.tensor(std, dtype=torch.float32)
        if len(mean) != len(std):
            raise ValueError("mean and std need the same number of channels")
        if (std <= 0).any():
            raise ValueError("std must be positive")
        self.register_buffer("mean", mean)
        self.register_buffer("std", std)

    def forward(self, x):
        return (x - self.mean[None, :, None, None]) / self.std[None, :, None, None]
# %% ch06_train_and_validate points=5 feedback=passed
def train_and_validate(model, train_loader, val_loader, optimizer, loss_fn, device):
    model.train()
    running, count = 0.0, 0
    for inputs, targets in train_loader:
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        running += loss.item() * targets.size(0)
        count += targets.size(0)
    model.eval()
    val_loss, correct, total = 0.0, 0, 0
    with torch.no_grad():
        for inputs, targets in val_loader:
            inputs, targets = inputs.to(device), targets.to(device)
            outputs = model(inputs)
            val_loss += loss_fn(outputs, targets).item() * targets.size(0)
            correct += (outputs.argmax(1) == targets).sum().item()
            total += targets.size(0)
    model.train()
    return {"train_loss": running / count, "val_loss": val_loss / total,
            "val_accuracy": correct / total}
