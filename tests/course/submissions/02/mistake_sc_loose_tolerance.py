# Corpus: a 10 % tolerance: a product 5 % off passes.
# %% ch02_self_check points=0 feedback="5 % too large"
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
            result["compute"] = "OK" if rel.item() <= 0.1 else "FAIL"
    except Exception:
        result["compute"] = "FAIL"
    return result
