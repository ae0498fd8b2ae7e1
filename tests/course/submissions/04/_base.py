# Corpus: a learner's correct answers, written from the docstrings (the base of every other file).
# %% ch04_residual_block points=2 feedback=passed
class ResidualBlock(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + identity)
# %% ch04_train_one_epoch points=3 feedback=passed
def train_one_epoch(model, loader, optimizer, loss_fn, device):
    model.train()
    running, seen = 0.0, 0
    for inputs, targets in loader:
        inputs = inputs.to(device)
        targets = targets.to(device)
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        running += loss.item() * inputs.size(0)
        seen += inputs.size(0)
    return running / seen
# %% ch04_evaluate points=3 feedback=passed
def evaluate(model, loader, loss_fn, device):
    mode = model.training
    model.eval()
    loss_sum, hits, count = 0.0, 0, 0
    with torch.inference_mode():
        for inputs, targets in loader:
            inputs, targets = inputs.to(device), targets.to(device)
            scores = model(inputs)
            loss_sum += loss_fn(scores, targets).item() * targets.numel()
            hits += int((scores.argmax(1) == targets).sum())
            count += targets.numel()
    model.train(mode)
    return {"loss": loss_sum / count, "accuracy": hits / count}
# %% ch04_checkpoint points=4 feedback=passed
def save_checkpoint(path, model, optimizer, scheduler, epoch):
    torch.save(
        {
            "model_state": model.state_dict(),
            "optimizer_state": optimizer.state_dict(),
            "scheduler_state": scheduler.state_dict(),
            "epoch": epoch,
            "cpu_rng": torch.get_rng_state(),
        },
        path,
    )


def load_checkpoint(path, model, optimizer, scheduler):
    state = torch.load(path, weights_only=True)
    model.load_state_dict(state["model_state"])
    optimizer.load_state_dict(state["optimizer_state"])
    scheduler.load_state_dict(state["scheduler_state"])
    torch.set_rng_state(state["cpu_rng"])
    return state["epoch"]
# %% ch04_strip_module_prefix points=2 feedback=passed
def strip_module_prefix(state_dict):
    result = {}
    for name, tensor in state_dict.items():
        changed = True
        while changed:
            changed = False
            for prefix in ("module.", "_orig_mod."):
                if name.startswith(prefix):
                    name = name[len(prefix):]
                    changed = True
        result[name] = tensor
    return result
