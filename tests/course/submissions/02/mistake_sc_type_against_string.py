# Corpus: self_check compares the product's device type with the string it was given: right for "cpu", "cuda" and "mps", but "cuda" != "cuda:1", so a right product on the GPU asked for by index is "wrong_device".
# %% ch02_self_check points=0 feedback="compare devices, not a device with a string"
def self_check(device, place=None, matmul=torch.matmul, size=64, scale=1.0):
    dev = torch.device(device)
    if dev.type == "cuda":
        if not torch.backends.cuda.is_built():
            return "not_built"
        if not torch.cuda.is_available() or (dev.index or 0) >= torch.cuda.device_count():
            return "not_available"
    elif dev.type == "mps":
        if not torch.backends.mps.is_built():
            return "not_built"
        if not torch.backends.mps.is_available():
            return "not_available"
    a, b = torch.randn(size, size) * scale, torch.randn(size, size) * scale
    if place is None:
        place = lambda t: t.to(dev)  # noqa: E731
    try:
        c = matmul(place(a), place(b))
    except Exception:
        return "crashed"
    if c.device.type != device:
        return "wrong_device"
    exact = a.double() @ b.double()
    err = ((c.cpu().double() - exact).norm() / exact.norm()).item()
    return "ok" if err < 0.01 else "wrong_result"
