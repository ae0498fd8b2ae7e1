# Corpus: a learner's correct answers, written from the docstrings (the base of every other file).
# %% ch02_cuda_compatible points=3 feedback=passed
def cuda_compatible(driver_cuda: str, wheel_cuda: str) -> bool:
    d_major, d_minor = [int(x) for x in driver_cuda.split(".")[:2]]
    w_major, w_minor = [int(x) for x in wheel_cuda.split(".")[:2]]
    if (w_major, w_minor) <= (d_major, d_minor):
        return True
    if w_major == d_major and w_major >= 11:
        return True
    return False
# %% ch02_error_cause points=3 feedback=passed
def error_cause(message: str) -> str:
    m = message.lower()
    if "not compiled with cuda enabled" in m:
        return "cpu_only_wheel"
    if "driver on your system is too old" in m or "driver version is insufficient" in m:
        return "driver_too_old"
    if ("found no nvidia driver" in m or "couldn't communicate with the nvidia driver" in m
            or "no cuda-capable device" in m):
        return "no_driver"
    if "no kernel image is available" in m or ("with cuda capability" in m and "is not compatible" in m):
        return "no_kernel_image"
    for name in ("torch", "torchvision", "torchaudio"):
        if f"no module named '{name}'" in m:
            return "torch_not_installed"
    return "unknown"
# %% ch02_self_check points=4 feedback=passed
def self_check(device, size=256, matmul=torch.matmul):
    result = {"torch": torch.__version__, "cuda_runtime": torch.version.cuda,
              "device": "SKIP", "compute": "SKIP", "seconds": None}
    dev = torch.device(device)
    if dev.type == "cpu":
        ok = True
    elif dev.type == "cuda":
        index = 0 if dev.index is None else dev.index
        ok = torch.cuda.is_available() and index < torch.cuda.device_count()
    elif dev.type == "mps":
        ok = torch.backends.mps.is_available()
    else:
        ok = False
    if not ok:
        return result
    result["device"] = "OK"
    a = torch.randn(size, size)
    b = torch.randn(size, size)
    expected = a.double() @ b.double()
    try:
        a_dev, b_dev = a.to(dev), b.to(dev)
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
        t0 = time.perf_counter()
        c = matmul(a_dev, b_dev)
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
        result["seconds"] = time.perf_counter() - t0
        c = c.cpu().double()
        if not torch.isfinite(c).all():
            result["compute"] = "FAIL"
        else:
            rel = torch.linalg.norm(c - expected) / torch.linalg.norm(expected)
            result["compute"] = "OK" if rel.item() <= 0.01 else "FAIL"
    except Exception:
        result["compute"] = "FAIL"
    return result
