# Corpus: self_check compares element by element with torch.allclose's default tolerances.
# %% ch02_self_check points=0 feedback="neither an absolute tolerance nor an entry-by-entry one"
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
    except Exception:
        return "crashed"
    if c.device.type != dev.type:
        return "wrong_device"
    return "ok" if torch.allclose(c.cpu(), a @ b) else "wrong_result"
