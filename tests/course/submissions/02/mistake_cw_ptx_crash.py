# Corpus: choose_wheel slices every entry as "sm_" plus digits, so a PTX entry ("compute_90") raises.
# %% ch02_choose_wheel points=0 feedback="a list may hold PTX entries"
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
        fits = any(int(a[3:-1]) == capability[0] and int(a[-1]) <= capability[1] for a in archs)
        if fits and (best_v is None or v > best_v):
            best, best_v = tag, v
    return best
