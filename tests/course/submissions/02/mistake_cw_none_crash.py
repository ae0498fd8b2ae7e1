# Corpus: choose_wheel forgets the machines without a driver or a GPU (None): it raises there.
# %% ch02_choose_wheel points=0 feedback="NoneType"
def choose_wheel(driver_cuda, capability, wheels):
    d = tuple(int(x) for x in driver_cuda.split(".")[:2])
    best, best_v = "cpu", None
    for tag, archs in wheels.items():
        if tag == "cpu":
            continue
        v = (int(tag[2:-1]), int(tag[-1]))
        if not (v <= d or (v[0] == d[0] and d[0] >= 11)):
            continue
        if any(int(a[3:-1]) == capability[0] and int(a[-1]) <= capability[1] for a in archs):
            if best_v is None or v > best_v:
                best, best_v = tag, v
    return best
