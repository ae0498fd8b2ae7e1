# Corpus: self_check compares the product's device, as a string, with the string it was given: str(product.device) is "cuda:0" on a working GPU asked for "cuda", so a working GPU is "wrong_device".
# %% ch02_self_check points=0 feedback="names no index"
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
    place = place or (lambda t: t.to(device))
    try:
        c = matmul(place(a), place(b))
    except Exception:
        return "crashed"
    if str(c.device) != device:
        return "wrong_device"
    exact = a.double() @ b.double()
    err = ((c.cpu().double() - exact).norm() / exact.norm()).item()
    return "ok" if err < 0.01 else "wrong_result"
