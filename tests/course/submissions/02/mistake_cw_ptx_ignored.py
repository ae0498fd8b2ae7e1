# Corpus: choose_wheel reads only the SASS entries (sm_XY) and skips PTX (compute_XY), so a GPU served only by PTX gets no wheel.
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
        sass = [a for a in archs if a.startswith("sm_")]
        fits = any(int(a[3:-1]) == capability[0] and int(a[-1]) <= capability[1] for a in sass)
        if fits and (best_v is None or v > best_v):
            best, best_v = tag, v
    return best
