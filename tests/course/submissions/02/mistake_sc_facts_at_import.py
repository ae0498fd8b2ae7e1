# Corpus: self_check reads the build and the GPUs once, when its cell runs, not when it is called.
# %% ch02_self_check points=0 feedback="when self_check runs"
HAS_CUDA_BUILD = torch.backends.cuda.is_built()
GPUS = torch.cuda.device_count() if torch.cuda.is_available() else 0


def self_check(device, place=None, matmul=torch.matmul, size=64, scale=1.0):
    dev = torch.device(device)
    if dev.type == "cuda":
        if not HAS_CUDA_BUILD:
            return "not_built"
        if (dev.index or 0) >= GPUS:
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
    exact = a.double() @ b.double()
    err = ((c.cpu().double() - exact).norm() / exact.norm()).item()
    return "ok" if err < 0.01 else "wrong_result"
