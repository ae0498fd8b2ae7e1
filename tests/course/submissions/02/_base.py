# Corpus: a learner's correct answers, written from the docstrings (the base of every other file).
# %% ch02_choose_wheel points=3 feedback=passed
def choose_wheel(driver_cuda, capability, wheels):
    if driver_cuda is None or capability is None:
        return "cpu"
    d_major, d_minor = (int(x) for x in driver_cuda.split(".")[:2])
    gpu_major, gpu_minor = capability
    best, best_version = "cpu", None
    for tag, archs in wheels.items():
        if tag == "cpu":
            continue
        digits = tag[2:]
        version = (int(digits[:-1]), int(digits[-1]))
        driver_older = version > (d_major, d_minor)
        if driver_older and not (version[0] == d_major and d_major >= 11):
            continue  # the driver cannot run this runtime
        fits = False
        for arch in archs:
            kind, number = arch.split("_")
            arch_version = (int(number[:-1]), int(number[-1]))
            if kind == "sm" and arch_version[0] == gpu_major and arch_version[1] <= gpu_minor:
                fits = True
            if kind == "compute" and arch_version <= (gpu_major, gpu_minor) and not driver_older:
                fits = True  # the driver JIT-compiles the PTX
        if fits and (best_version is None or version > best_version):
            best, best_version = tag, version
    return best
# %% ch02_standardized points=3 feedback=passed
class Standardized(nn.Module):
    def __init__(self, mean, std, num_classes: int):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(len(mean), 16), nn.ReLU(), nn.Linear(16, num_classes))
        self.register_buffer("mean", torch.tensor(mean, dtype=torch.float32))
        self.register_buffer("std", torch.tensor(std, dtype=torch.float32))

    def forward(self, x):
        return self.net((x - self.mean) / self.std)


def predict(model, features):
    p = next(model.parameters())
    x = torch.from_numpy(features).to(device=p.device, dtype=p.dtype)
    with torch.no_grad():
        logits = model(x)
    return logits.argmax(dim=1)
# %% ch02_self_check points=4 feedback=passed
def self_check(device, place=None, matmul=torch.matmul, size=64, scale=1.0):
    dev = torch.device(device)
    if dev.type == "cuda":
        if torch.version.cuda is None:
            return "not_built"
        if not torch.cuda.is_available():
            return "not_available"
        index = 0 if dev.index is None else dev.index
        if index >= torch.cuda.device_count():
            return "not_available"
    if dev.type == "mps":
        if not torch.backends.mps.is_built():
            return "not_built"
        if not torch.backends.mps.is_available():
            return "not_available"
    if place is None:
        place = lambda t: t.to(dev)
    a = torch.randn(size, size) * scale
    b = torch.randn(size, size) * scale
    try:
        c = matmul(place(a), place(b))
    except Exception:
        return "crashed"
    if c.device.type != dev.type:
        return "wrong_device"
    if dev.index is not None and c.device.index != dev.index:
        return "wrong_device"
    exact = a.double() @ b.double()
    c = c.cpu().double()
    if not torch.isfinite(c).all():
        return "wrong_result"
    rel = torch.linalg.norm(c - exact) / torch.linalg.norm(exact)
    return "ok" if rel <= 0.01 else "wrong_result"
