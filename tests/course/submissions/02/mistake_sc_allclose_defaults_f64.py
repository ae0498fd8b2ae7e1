# Corpus: self_check compares with float64 by torch.allclose with its default tolerances (seeded matrices): the visible test already fails it, a right float32 product on the CPU judged wrong (the hidden tests add TF32 and large products, and pass broken tiny ones).
# %% ch02_self_check points=0 feedback="expected 'ok', got 'wrong_result'"
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
    g = torch.Generator().manual_seed(0)
    a, b = scale * torch.randn(size, size, generator=g), scale * torch.randn(size, size, generator=g)
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
    return "ok" if torch.allclose(c, exact) else "wrong_result"
