# Corpus: self_check compares the product's device with the device an empty tensor lands on when made on `device` (torch's own resolution of "cuda" to the current GPU), and checks NaN with math.isfinite: full marks.
# %% ch02_self_check points=4 feedback=passed
import math


def self_check(device, place=None, matmul=torch.matmul, size=64, scale=1.0):
    dev = torch.device(device)
    if dev.type == "cuda":
        if torch.version.cuda is None:
            return "not_built"
        if not torch.cuda.is_available() or (dev.index or 0) >= torch.cuda.device_count():
            return "not_available"
    if dev.type == "mps":
        if not torch.backends.mps.is_built():
            return "not_built"
        if not torch.backends.mps.is_available():
            return "not_available"
    where = torch.empty(0, device=dev).device  # "cuda" -> cuda:0 (the current GPU), "mps" -> mps:0
    g = torch.Generator().manual_seed(7)
    a, b = (scale * torch.randn(size, size, generator=g) for _ in range(2))
    move = place if place is not None else (lambda t: t.to(dev))
    try:
        product = matmul(move(a), move(b))
    except Exception:
        return "crashed"
    if product.device != where:
        return "wrong_device"
    exact = a.double() @ b.double()
    error = float(torch.linalg.matrix_norm(product.cpu().double() - exact) / torch.linalg.matrix_norm(exact))
    return "ok" if math.isfinite(error) and error < 0.01 else "wrong_result"
