# Corpus: choose_wheel takes any PTX entry as running on any GPU, older ones too (compute_90 on an 8.0 GPU).
# %% ch02_choose_wheel points=0 feedback="compute_90 does not serve an 8.0 GPU"
def choose_wheel(driver_cuda, capability, wheels):
    if driver_cuda is None or capability is None:
        return "cpu"
    d = tuple(int(x) for x in driver_cuda.split(".")[:2])
    best, best_v = "cpu", None
    for tag, archs in wheels.items():
        if tag == "cpu":
            continue
        v = (int(tag[2:-1]), int(tag[-1]))
        if not (v <= d or (v[0] == d[0] and d[0] >= 11)):
            continue
        fits = False
        for a in archs:
            kind, digits = a.split("_")
            x, y = int(digits[:-1]), int(digits[-1])
            if kind == "sm" and x == capability[0] and y <= capability[1]:
                fits = True
            if kind == "compute" and v <= d:
                fits = True
        if fits and (best_v is None or v > best_v):
            best, best_v = tag, v
    return best
