# Corpus: a second correct style: packaging.version for the versions, a table of phrases with any(),
# usability tested by allocating on the device, a NumPy float64 reference.
# %% ch02_cuda_compatible points=3 feedback=passed
from packaging.version import Version


def cuda_compatible(driver_cuda, wheel_cuda):
    driver, wheel = Version(driver_cuda), Version(wheel_cuda)
    newer = (wheel.major, wheel.minor) > (driver.major, driver.minor)
    if not newer:
        return True
    return driver.major == wheel.major and driver.major >= 11
# %% ch02_error_cause points=3 feedback=passed
PHRASES = {
    "cpu_only_wheel": ["torch not compiled with cuda enabled"],
    "driver_too_old": ["is too old (found version", "cuda driver version is insufficient"],
    "no_driver": ["found no nvidia driver", "couldn't communicate with the nvidia driver",
                  "no cuda-capable device is detected"],
    "no_kernel_image": ["no kernel image is available for execution",
                        "is not compatible with the current pytorch installation"],
    "torch_not_installed": ["no module named 'torch'", "no module named 'torchvision'",
                            "no module named 'torchaudio'"],
}


def error_cause(message):
    text = message.casefold()
    for key, phrases in PHRASES.items():
        if any(p in text for p in phrases):
            return key
    return "unknown"
# %% ch02_self_check points=4 feedback=passed
def self_check(device, size=256, matmul=torch.matmul):
    out = dict(torch=str(torch.__version__), cuda_runtime=torch.version.cuda)
    try:
        torch.empty(1, device=device)  # can PyTorch put anything there?
        usable = True
    except Exception:
        usable = False
    if not usable:
        return {**out, "device": "SKIP", "compute": "SKIP", "seconds": None}
    x = np.random.default_rng(1).standard_normal((2, size, size)).astype(np.float32)
    exact = x[0].astype(np.float64) @ x[1].astype(np.float64)
    a, b = torch.from_numpy(x[0]).to(device), torch.from_numpy(x[1]).to(device)
    try:
        start = time.perf_counter()
        y = matmul(a, b)
        if torch.device(device).type == "cuda":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - start
        y = y.detach().cpu().double().numpy()
    except Exception:
        return {**out, "device": "OK", "compute": "FAIL", "seconds": None}
    err = np.linalg.norm(y - exact) / np.linalg.norm(exact)
    verdict = "OK" if np.isfinite(y).all() and err < 0.01 else "FAIL"
    return {**out, "device": "OK", "compute": verdict, "seconds": float(seconds)}
