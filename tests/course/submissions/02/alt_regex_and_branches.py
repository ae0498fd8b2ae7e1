# Corpus: a third correct style: a regex for the versions and explicit branches, one compiled
# case-insensitive regex per cause, the device index parsed by hand and the median of three calls.
# %% ch02_cuda_compatible points=3 feedback=passed
import re


def cuda_compatible(driver_cuda, wheel_cuda):
    dm, dn = map(int, re.match(r"(\d+)\.(\d+)", driver_cuda).groups())
    wm, wn = map(int, re.match(r"(\d+)\.(\d+)", wheel_cuda).groups())
    if wm < dm:
        return True
    if wm > dm:
        return False
    if wn <= dn:
        return True
    return dm >= 11
# %% ch02_error_cause points=3 feedback=passed
import re

_RULES = [
    ("cpu_only_wheel", re.compile(r"not compiled with CUDA", re.I)),
    ("driver_too_old", re.compile(r"too old \(found version|driver version is insufficient", re.I)),
    ("no_driver", re.compile(r"no NVIDIA driver|communicate with the NVIDIA driver|"
                             r"no CUDA-capable device", re.I)),
    ("no_kernel_image", re.compile(r"no kernel image|sm_\d+ is not compatible", re.I)),
    ("torch_not_installed", re.compile(r"No module named '(torch|torchvision|torchaudio)'", re.I)),
]


def error_cause(message):
    for key, rule in _RULES:
        if rule.search(message):
            return key
    return "unknown"
# %% ch02_self_check points=4 feedback=passed
import statistics


def self_check(device, size=256, matmul=torch.matmul):
    report = {"torch": str(torch.__version__), "cuda_runtime": torch.version.cuda,
              "device": "SKIP", "compute": "SKIP", "seconds": None}
    kind, _, index = device.partition(":")
    if kind == "cpu":
        usable = True
    elif kind == "cuda":
        usable = torch.cuda.is_available() and int(index or 0) < torch.cuda.device_count()
    elif kind == "mps":
        usable = torch.backends.mps.is_available()
    else:
        usable = False
    if not usable:
        return report
    report["device"] = "OK"
    a, b = torch.rand(size, size) - 0.5, torch.rand(size, size) - 0.5
    reference = torch.mm(a.double(), b.double())
    times = []
    try:
        a, b = a.to(device), b.to(device)
        for _ in range(3):
            t = time.perf_counter()
            product = matmul(a, b)
            torch.accelerator.synchronize() if kind != "cpu" else None
            times.append(time.perf_counter() - t)
        diff = (product.to("cpu", torch.float64) - reference).norm() / reference.norm()
    except Exception:
        report["compute"] = "FAIL"
        return report
    report["seconds"] = statistics.median(times)
    report["compute"] = "OK" if bool(diff < 0.01) else "FAIL"
    return report
