# Corpus: self_check as a list of small checks, torch.dist for the error, the build read from torch.version.cuda, the index compared only when the device names one: full marks.
# %% ch02_self_check points=4 feedback=passed
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


def _same_place(asked, found):
    return found.type == asked.type and asked.index in (None, found.index)


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
    if not _same_place(dev, product.device):
        return "wrong_device"
    exact = (a.double() @ b.double())
    relative = (torch.dist(product.cpu().double(), exact) / exact.norm()).item()
    return "ok" if relative < 0.01 else "wrong_result"
