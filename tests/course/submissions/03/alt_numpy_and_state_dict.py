# Corpus: other styles: NumPy makes the layout (np.require), gradients summed then divided, an EMA over the
# state_dict's tensors.
# %% ch03_as_float32 points=3 feedback=passed
def as_float32(array, device):
    if not isinstance(array, np.ndarray):
        raise TypeError("as_float32 needs a numpy.ndarray")
    # require returns the array itself when it already is native float32, C-contiguous and
    # writable, and a copy that is all three otherwise
    fit = np.require(array, dtype=np.float32, requirements=["C_CONTIGUOUS", "WRITEABLE"])
    return torch.from_numpy(fit).to(device)
# %% ch03_accumulation_step points=4 feedback=passed
def accumulation_step(model, optimizer, loss_fn, micro_batches):
    optimizer.zero_grad(set_to_none=True)
    pad = getattr(loss_fn, "ignore_index", None)
    summed = []
    count = 0
    for x, y in micro_batches:
        n = y.numel() if pad is None else int(np.sum(y.cpu().numpy() != pad))
        loss = loss_fn(model(x), y)
        if loss_fn.reduction == "mean":
            loss = loss * n  # back to a sum over this micro-batch's counted targets
        loss.backward()
        summed.append(loss.detach())
        count += n
    if loss_fn.reduction == "mean":
        with torch.no_grad():
            for p in model.parameters():
                if p.grad is not None:
                    p.grad /= count  # the sum of all counted targets' gradients, divided once
    optimizer.step()
    total = torch.stack(summed).sum().item()
    return total / count if loss_fn.reduction == "mean" else total
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
