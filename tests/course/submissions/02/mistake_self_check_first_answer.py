# Corpus: the natural first answer to self_check after one careful reading: the build and the devices read when it runs, the error of the whole matrix relative to the exact product, NaN caught, and the placement checked as `product.device != torch.device(device)`. It passes the visible check and every CPU case, and calls a working GPU "wrong_device": a tensor there says "cuda:0" (or "mps:0"), and torch.device("cuda") != torch.device("cuda:0").
# %% ch02_self_check points=0 feedback="torch.device('cuda') != torch.device('cuda:0')"
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
    a = torch.randn(size, size) * scale
    b = torch.randn(size, size) * scale
    if place is None:
        place = lambda t: t.to(dev)  # noqa: E731
    try:
        product = matmul(place(a), place(b))
    except Exception:
        return "crashed"
    if product.device != dev:
        return "wrong_device"
    exact = a.double() @ b.double()
    error = torch.linalg.norm(product.cpu().double() - exact) / torch.linalg.norm(exact)
    if not torch.isfinite(error) or error >= 0.01:
        return "wrong_result"
    return "ok"
