# Corpus: self_check makes standard normal matrices whatever scale says (and so checks the wrong magnitudes): the args check catches it.
# %% ch02_self_check points=0 feedback="standard normal numbers times scale"
def self_check(device, place=None, matmul=torch.matmul, size=64, scale=1.0):
    dev = torch.device(device)
    if dev.type == "cuda":
        if not torch.backends.cuda.is_built():
            return "not_built"
        if not torch.cuda.is_available() or (dev.index or 0) >= torch.cuda.device_count():
            return "not_available"
    if dev.type == "mps":
        if not torch.backends.mps.is_built():
            return "not_built"
        if not torch.backends.mps.is_available():
            return "not_available"
    place = place or (lambda t: t.to(dev))
    a, b = torch.randn(size, size), torch.randn(size, size)  # the scale is for the tolerance
    try:
        c = matmul(place(a), place(b))
    except Exception:
        return "crashed"
    if c.device.type != dev.type or (dev.index is not None and c.device.index != dev.index):
        return "wrong_device"
    exact = a.double() @ b.double()
    c = c.detach().cpu().double()
    if not torch.isfinite(c).all():
        return "wrong_result"
    return "ok" if (c - exact).abs().max() / exact.abs().max() < 0.01 else "wrong_result"
