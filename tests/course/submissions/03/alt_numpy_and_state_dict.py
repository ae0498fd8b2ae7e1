# Corpus: other styles: NumPy makes the layout, gradients summed then divided, an EMA over the
# state_dict's tensors.
# %% ch03_as_float32 points=3 feedback=passed
def as_float32(array, device):
    if not isinstance(array, np.ndarray):
        raise TypeError("as_float32 needs a numpy.ndarray")
    # ascontiguousarray returns the array itself when it already is float32 and C-contiguous
    contiguous = np.ascontiguousarray(array, dtype=np.float32)
    return torch.from_numpy(contiguous).to(device)
# %% ch03_accumulation_step points=4 feedback=passed
def accumulation_step(model, optimizer, loss_fn, micro_batches):
    optimizer.zero_grad(set_to_none=True)
    weighted = []
    count = 0
    for x, y in micro_batches:
        loss = loss_fn(model(x), y) * y.shape[0]  # a sum over the micro-batch
        loss.backward()
        weighted.append(loss.detach())
        count += y.shape[0]
    with torch.no_grad():
        for p in model.parameters():
            if p.grad is not None:
                p.grad /= count  # the sum of all samples' gradients, divided once
    optimizer.step()
    return torch.stack(weighted).sum().item() / count
# %% ch03_ema_update points=3 feedback=passed
def ema_update(ema_model, model, decay):
    names = {name for name, _ in model.named_parameters()}
    source = model.state_dict()
    with torch.no_grad():
        # state_dict() holds the module's own tensors (detached views), so writing into them
        # writes into ema_model
        for key, tensor in ema_model.state_dict().items():
            if key in names:
                tensor.mul_(decay).add_(source[key] * (1 - decay))
            else:
                tensor.copy_(source[key])
    ema_model.requires_grad_(False)
