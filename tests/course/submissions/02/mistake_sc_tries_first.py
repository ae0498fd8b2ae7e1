# Corpus: self_check computes first and asks about the device only when the computation failed.
# %% ch02_self_check points=0 feedback="nothing is computed"
def self_check(device, place=None, matmul=torch.matmul, size=64, scale=1.0):
    dev = torch.device(device)
    place = place or (lambda t: t.to(dev))
    a, b = scale * torch.randn(size, size), scale * torch.randn(size, size)
    try:
        c = matmul(place(a), place(b))
    except Exception:
        c = None
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
    if c is None:
        return "crashed"
    if c.device.type != dev.type:
        return "wrong_device"
    exact = a.double() @ b.double()
    err = ((c.cpu().double() - exact).norm() / exact.norm()).item()
    return "ok" if err < 0.01 else "wrong_result"
