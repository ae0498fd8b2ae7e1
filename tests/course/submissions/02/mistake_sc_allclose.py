# Corpus: self_check compares element by element with torch.allclose's default tolerances.
# %% ch02_self_check points=0 feedback="element-wise tolerances"
def self_check(device, place=None, matmul=torch.matmul):
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
    a, b = torch.randn(64, 64), torch.randn(64, 64)
    try:
        c = matmul(place(a), place(b))
    except Exception:
        return "crashed"
    if c.device.type != dev.type:
        return "wrong_device"
    return "ok" if torch.allclose(c.cpu(), a @ b) else "wrong_result"
