# Corpus: self_check reads the product's values before asking where it is: a product elsewhere crashes the check.
# %% ch02_self_check points=0 feedback="before reading its values"
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
    a, b = scale * torch.randn(size, size), scale * torch.randn(size, size)
    try:
        c = matmul(place(a), place(b))
        exact = a.double() @ b.double()
        err = ((c.cpu().double() - exact).norm() / exact.norm()).item()
    except Exception:
        return "crashed"
    if err >= 0.01 or err != err:
        return "wrong_result"
    return "ok" if c.device.type == dev.type else "wrong_device"
