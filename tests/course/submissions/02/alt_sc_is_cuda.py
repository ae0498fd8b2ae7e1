# Corpus: self_check that asks the product itself where it is (is_cuda and get_device() for a GPU, is_mps, device.type for the CPU), the product brought back with .to("cpu", torch.float64), NaN failed by a `not error < 0.01` test: full marks.
# %% ch02_self_check points=4 feedback=passed
def _landed(product, dev):
    if dev.type == "cuda":
        return product.is_cuda and (dev.index is None or product.get_device() == dev.index)
    if dev.type == "mps":
        return product.is_mps
    return product.device.type == dev.type


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
    a = torch.randn(size, size).mul(scale)
    b = torch.randn(size, size).mul(scale)
    try:
        moved = [place(t) if place else t.to(dev) for t in (a, b)]
        product = matmul(*moved)
    except Exception:
        return "crashed"
    if not _landed(product, dev):
        return "wrong_device"
    exact = a.double() @ b.double()
    error = (product.to("cpu", torch.float64) - exact).norm() / exact.norm()
    if not error < 0.01:  # False for NaN too
        return "wrong_result"
    return "ok"
