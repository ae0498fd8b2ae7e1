# Corpus: choose_wheel reads compute_XY as if it were sm_XY (the same major version only): PTX for 9.0 does not reach a 12.0 GPU.
# %% ch02_choose_wheel points=0 feedback="can still run the PTX"
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
            digits = a.split("_")[1]
            if int(digits[:-1]) == capability[0] and int(digits[-1]) <= capability[1]:
                fits = True
        if fits and (best_v is None or v > best_v):
            best, best_v = tag, v
    return best
