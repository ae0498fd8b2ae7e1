# Corpus: choose_wheel compares architectures as plain numbers (sm_90 <= 100), across major versions.
# %% ch02_choose_wheel points=0 feedback="its own major version"
def choose_wheel(driver_cuda, capability, wheels):
    if driver_cuda is None or capability is None:
        return "cpu"
    d = tuple(int(x) for x in driver_cuda.split(".")[:2])
    gpu = capability[0] * 10 + capability[1]
    best, best_v = "cpu", None
    for tag, archs in wheels.items():
        if tag == "cpu":
            continue
        v = (int(tag[2:-1]), int(tag[-1]))
        if not (v <= d or (v[0] == d[0] and d[0] >= 11)):
            continue
        fits = False
        for a in archs:
            kind, number = a.split("_")
            if kind == "sm" and int(number) <= gpu:
                fits = True
            if kind == "compute" and int(number) <= gpu and v <= d:
                fits = True
        if fits and (best_v is None or v > best_v):
            best, best_v = tag, v
    return best
