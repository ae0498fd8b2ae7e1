# Corpus: other styles: explicit branches on dtype and layout, backward(gradient=weight), and
# torch's own EMA function from swa_utils.
# %% ch03_as_float32 points=3 feedback=passed
def as_float32(array, device):
    if not isinstance(array, np.ndarray):
        raise TypeError(f"array: expected np.ndarray, got {type(array)}")
    device = torch.device(device)
    if array.dtype != np.float32:
        array = array.astype(np.float32)  # the one copy that converts
    elif min(array.strides) < 0 or not array.flags.writeable:
        array = np.array(array, order="C")  # reversed or read-only: a fresh layout of its own
    tensor = torch.from_numpy(array)
    if device.type != "cpu":
        tensor = tensor.to(device)
    return tensor
# %% ch03_accumulation_step points=4 feedback=passed
def accumulation_step(model, optimizer, loss_fn, micro_batches):
    if loss_fn.reduction == "sum":
        weights = [1.0] * len(micro_batches)
    elif isinstance(loss_fn, nn.CrossEntropyLoss):
        kept = [int(torch.count_nonzero(t != loss_fn.ignore_index)) for _, t in micro_batches]
        weights = [n / sum(kept) for n in kept]
    else:  # MSELoss: every element of the targets counts
        sizes = [t.numel() for _, t in micro_batches]
        weights = [n / sum(sizes) for n in sizes]
    model.zero_grad()
    losses = []
    for (inputs, targets), weight in zip(micro_batches, weights):
        loss = loss_fn(model(inputs), targets)
        loss.backward(gradient=torch.tensor(weight))  # d(weighted loss) = weight * d(loss)
        losses.append(loss.item())
    optimizer.step()
    return float(sum(l * w for l, w in zip(losses, weights)))
# %% ch03_ema_update points=3 feedback=passed
def ema_update(ema_model, model, decay):
    ema_params = list(ema_model.parameters())
    for p in ema_params:
        p.requires_grad_(False)
    average = get_ema_multi_avg_fn(decay)  # torch's EMA rule: in place, under no_grad
    average(ema_params, [p.detach() for p in model.parameters()], 1)
    with torch.no_grad():
        for mine, theirs in zip(ema_model.buffers(), model.buffers()):
            mine.copy_(theirs)
