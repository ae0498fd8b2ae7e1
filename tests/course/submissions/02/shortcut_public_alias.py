# Corpus: delegating to the companion under other names earns nothing and is listed for review.
# review: called the companion's reference
# %% ch02_cuda_compatible points=0 feedback="not delegated to the companion"
from companion import cuda_compatible as _versions_ok


def cuda_compatible(driver_cuda, wheel_cuda):
    return _versions_ok(driver_cuda, wheel_cuda)
# %% ch02_error_cause points=0 feedback="not delegated to the companion"
from companion.env import diagnose as _explain

_MINE = {"cpu_only_wheel", "driver_too_old", "no_driver", "no_kernel_image", "torch_not_installed"}


def error_cause(message):
    key = _explain(message).key
    return key if key in _MINE else "unknown"
# %% ch02_self_check points=0 feedback="not delegated to the companion"
import companion as _c


def self_check(device, size=256, matmul=torch.matmul):
    report = _c.doctor(size=size, verbose=False)
    name = "cuda:0" if device == "cuda" else device
    ran = [c for c in report.checks if c.section == "matmul" and c.name == name]
    return {"torch": str(torch.__version__), "cuda_runtime": torch.version.cuda,
            "device": "OK" if ran else "SKIP", "compute": ran[0].status if ran else "SKIP",
            "seconds": ran[0].seconds if ran else None}
