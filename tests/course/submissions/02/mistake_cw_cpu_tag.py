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
