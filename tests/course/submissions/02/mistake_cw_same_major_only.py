# Corpus: choose_wheel accepts any kernel of the GPU's major version, newer minor versions too.
# %% ch02_choose_wheel points=0 feedback="SASS for a newer minor version does not run"
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
            if kind == "sm" and int(digits[:-1]) == capability[0]:
                fits = True
            if kind == "compute" and (int(digits[:-1]), int(digits[-1])) <= tuple(capability) and v <= d:
                fits = True
        if fits and (best_v is None or v > best_v):
            best, best_v = tag, v
    return best
