# Corpus: choose_wheel picks the newest of the qualifying wheels by comparing the tags as strings.
# %% ch02_choose_wheel points=0 feedback="as numbers"
def choose_wheel(driver_cuda, capability, wheels):
    if driver_cuda is None or capability is None:
        return "cpu"
    d = tuple(int(x) for x in driver_cuda.split(".")[:2])
    good = []
    for tag, archs in wheels.items():
        if tag == "cpu":
            continue
        v = (int(tag[2:-1]), int(tag[-1]))
        if not (v <= d or (v[0] == d[0] and d[0] >= 11)):
            continue
        if any(int(a[3:-1]) == capability[0] and int(a[-1]) <= capability[1] for a in archs):
            good.append(tag)
    return max(good) if good else "cpu"
