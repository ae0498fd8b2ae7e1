# Corpus: choose_wheel takes the first wheel that qualifies in the menu's order, not the newest.
# %% ch02_choose_wheel points=0 feedback="newest CUDA runtime"
def choose_wheel(driver_cuda, capability, wheels):
    if driver_cuda is None or capability is None:
        return "cpu"
    d = tuple(int(x) for x in driver_cuda.split(".")[:2])
    for tag, archs in wheels.items():
        if tag == "cpu":
            continue
        v = (int(tag[2:-1]), int(tag[-1]))
        if not (v <= d or (v[0] == d[0] and d[0] >= 11)):
            continue
        if _kernels_run(archs, capability, v > d):
            return tag
    return "cpu"


def _kernels_run(archs, capability, driver_older):
    for a in archs:
        kind, digits = a.split("_")
        x, y = int(digits[:-1]), int(digits[-1])
        if kind == "sm" and x == capability[0] and y <= capability[1]:
            return True
        if kind == "compute" and (x, y) <= tuple(capability) and not driver_older:
            return True  # PTX, compiled by the driver
    return False
