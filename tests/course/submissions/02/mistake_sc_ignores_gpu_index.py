# Corpus: self_check compares only the kind of device (product.device.type): asked for "cuda:1", a product that .cuda() put on cuda:0, another GPU, passes as "ok".
# %% ch02_self_check points=0 feedback="when the device names an index"
def _built(dev):
    if dev.type == "cuda":
        return torch.version.cuda is not None
    if dev.type == "mps":
        return torch.backends.mps.is_built()
    return True


def _usable(dev):
    if dev.type == "cuda":
        return torch.cuda.is_available() and (dev.index or 0) < torch.cuda.device_count()
    if dev.type == "mps":
        return torch.backends.mps.is_available()
    return True


def self_check(device, place=None, matmul=torch.matmul, size=64, scale=1.0):
    dev = torch.device(device)
    if not _built(dev):
        return "not_built"
    if not _usable(dev):
        return "not_available"
    if place is None:
        def place(t):
            return t.to(dev)
    gen = torch.Generator().manual_seed(1234)
    a = torch.randn(size, size, generator=gen).mul_(scale)
    b = torch.randn(size, size, generator=gen).mul_(scale)
    try:
        product = matmul(place(a), place(b))
    except Exception:
        return "crashed"
    if product.device.type != dev.type:
        return "wrong_device"
    exact = (a.double() @ b.double())
    relative = (torch.dist(product.cpu().double(), exact) / exact.norm()).item()
    return "ok" if relative < 0.01 else "wrong_result"
