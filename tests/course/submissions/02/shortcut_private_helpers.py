# Corpus: helpers of the companion (private version parsing, the batches module's model device, the private device test) called by their names: nothing earned, listed for review.
# review: called the companion's reference
# %% ch02_choose_wheel points=0 feedback="not delegated to the companion"
from companion.env import _parse_cuda


def choose_wheel(driver_cuda, capability, wheels):
    if driver_cuda is None or capability is None:
        return "cpu"
    d = _parse_cuda("driver_cuda", driver_cuda)
    best, best_v = "cpu", None
    for tag, archs in wheels.items():
        if tag == "cpu":
            continue
        v = _parse_cuda("wheel_cuda", f"{tag[2:-1]}.{tag[-1]}")
        if not (v <= d or (v[0] == d[0] and d[0] >= 11)):
            continue
        if _kernels_run(archs, capability, v > d):
            if best_v is None or v > best_v:
                best, best_v = tag, v
    return best


def _kernels_run(archs, capability, driver_older):
    for a in archs:
        kind, digits = a.split("_")
        x, y = int(digits[:-1]), int(digits[-1])
        if kind == "sm" and x == capability[0] and y <= capability[1]:
            return True
        if kind == "compute" and (x, y) <= tuple(capability) and not driver_older:
            return True  # PTX, compiled by the driver
    return False
# %% ch02_standardized points=0 feedback="not delegated to the companion"
import companion.batches as _batches


class Standardized(nn.Module):
    def __init__(self, mean, std, num_classes: int):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(len(mean), 16), nn.ReLU(), nn.Linear(16, num_classes))
        self.register_buffer("mean", torch.as_tensor(mean, dtype=torch.float32))
        self.register_buffer("std", torch.as_tensor(std, dtype=torch.float32))

    def forward(self, x):
        return self.net((x - self.mean) / self.std)


def predict(model, features):
    where = _batches.model_device(model, "auto")
    dtype = next(model.parameters()).dtype
    with torch.no_grad():
        return model(torch.as_tensor(features, dtype=dtype, device=where)).argmax(dim=1)
# %% ch02_self_check points=0 feedback="not delegated to the companion"
from companion.debug import _on_device


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
    if not _on_device(c, dev):
        return "wrong_device"
    exact = a.double() @ b.double()
    err = ((c.cpu().double() - exact).norm() / exact.norm()).item()
    return "ok" if err < 0.01 else "wrong_result"
