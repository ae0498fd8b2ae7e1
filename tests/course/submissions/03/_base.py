# Corpus: a learner's correct answers, written from the docstrings (the base of every other file).
# %% ch03_as_float32 points=3 feedback=passed
def as_float32(array: np.ndarray, device: torch.device | str) -> torch.Tensor:
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected a NumPy array, got {type(array).__name__}")
    if (not array.dtype.isnative or not array.flags.writeable
            or any(stride < 0 for stride in array.strides)):
        # torch refuses other byte orders and negative strides, and a tensor is always writable:
        # one float32 copy of its own (np.array copies by default)
        array = np.array(array, dtype=np.float32)
    # as_tensor shares the memory when no conversion and no move is needed
    return torch.as_tensor(array, dtype=torch.float32, device=device)
# %% ch03_accumulation_step points=4 feedback=passed
def accumulation_step(model, optimizer, loss_fn, micro_batches):
    ignored = getattr(loss_fn, "ignore_index", None)  # MSELoss has none

    def n_counted(targets):
        if ignored is None:
            return targets.numel()
        return (targets != ignored).sum().item()

    n_total = sum(n_counted(targets) for _, targets in micro_batches)
    optimizer.zero_grad()
    running = 0.0
    for inputs, targets in micro_batches:
        loss = loss_fn(model(inputs), targets)
        if loss_fn.reduction == "mean":
            loss = loss * n_counted(targets) / n_total
        loss.backward()
        running += loss.item()
    optimizer.step()
    return running
# %% ch03_ema_update points=3 feedback=passed
@torch.no_grad()
def ema_update(ema_model, model, decay):
    current = dict(model.named_parameters())
    for name, param in ema_model.named_parameters():
        param.requires_grad_(False)
        param.lerp_(current[name], 1 - decay)
    buffers = dict(model.named_buffers())
    for name, buffer in ema_model.named_buffers():
        buffer.copy_(buffers[name])
