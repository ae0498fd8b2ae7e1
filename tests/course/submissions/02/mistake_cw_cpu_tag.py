# Corpus: choose_wheel reads every tag of the menu as a CUDA version, "cpu" included, and raises.
# %% ch02_choose_wheel points=0 feedback="'cpu' is not a CUDA wheel"
def choose_wheel(driver_cuda, capability, wheels):
    if driver_cuda is None or capability is None:
        return "cpu"
    d = tuple(int(x) for x in driver_cuda.split(".")[:2])
    best, best_v = "cpu", None
    for tag, archs in wheels.items():
        v = (int(tag[2:-1]), int(tag[-1]))
        if not (v <= d or (v[0] == d[0] and d[0] >= 11)):
            continue
        if any(int(a[3:-1]) == capability[0] and int(a[-1]) <= capability[1] for a in archs):
            if best_v is None or v > best_v:
                best, best_v = tag, v
    return best
