# Corpus: a learner's correct answers, written from the docstrings (the base of every other file).
# %% ch04_residual_block points=3 feedback=passed
class ResidualBlock(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, stride: int = 1) -> None:
        super().__init__()
        last_norm = nn.BatchNorm2d(out_channels)
        nn.init.constant_(last_norm.weight, 0.0)  # the branch adds nothing until it learns to
        self.branch = nn.Sequential(
            nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(),
            nn.Conv2d(out_channels, out_channels, 3, padding=1, bias=False),
            last_norm,
        )
        if stride != 1 or in_channels != out_channels:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_channels, out_channels, 1, stride=stride, bias=False),
                nn.BatchNorm2d(out_channels),
            )
        else:
            self.shortcut = nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = self.shortcut(x)
        y = self.branch(x)
        return y + identity
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
    modes = {m: m.training for m in model.modules()}
    model.eval()
    loss_sum, hits, count = 0.0, 0, 0
    try:
        with torch.inference_mode():
            for inputs, targets in loader:
                inputs, targets = inputs.to(device), targets.to(device)
                scores = model(inputs)
                loss_sum += loss_fn(scores, targets).item() * targets.numel()
                hits += int((scores.argmax(1) == targets).sum())
                count += targets.numel()
    finally:
        for m, mode in modes.items():  # modules() lists parents first, so children come last
            m.train(mode)
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
# %% ch04_load_unwrapped points=2 feedback=passed
def load_unwrapped(model, state_dict):
    wanted = set(model.state_dict())
    keys = list(state_dict)
    prefixes = [""]
    while keys:
        longer = [
            prefixes[-1] + w
            for w in ("module.", "_orig_mod.")
            if all(k.startswith(prefixes[-1] + w) for k in keys)
        ]
        if not longer:
            break
        prefixes.append(longer[0])
    # peel as far as brings the most keys home (a child called `module` is not a wrapper)
    best = max(prefixes, key=lambda p: sum(k[len(p):] in wanted for k in keys))
    sd = {k[len(best):]: v for k, v in state_dict.items()}
    missing = [k for k in wanted if k not in sd]
    unexpected = [k for k in sd if k not in wanted]
    if missing or unexpected:
        raise RuntimeError(
            f"checkpoint does not match the model. Missing: {missing}. Unexpected: {unexpected}"
        )
    model.load_state_dict(sd)
