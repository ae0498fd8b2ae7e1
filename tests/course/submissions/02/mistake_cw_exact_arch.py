# Corpus: choose_wheel wants the GPU's exact architecture in the list (sm_89 for an 8.9 GPU).
# %% ch02_choose_wheel points=0 feedback="older minor version of its own major"
def choose_wheel(driver_cuda, capability, wheels):
    if driver_cuda is None or capability is None:
        return "cpu"
    d = tuple(int(x) for x in driver_cuda.split(".")[:2])
    wanted = f"sm_{capability[0]}{capability[1]}"
    best, best_v = "cpu", None
    for tag, archs in wheels.items():
        if tag == "cpu":
            continue
        v = (int(tag[2:-1]), int(tag[-1]))
        if not (v <= d or (v[0] == d[0] and d[0] >= 11)):
            continue
        ptx = [a for a in archs if a.startswith("compute_")]
        ptx_ok = v <= d and any((int(a[8:-1]), int(a[-1])) <= tuple(capability) for a in ptx)
        if wanted in archs or ptx_ok:
            if best_v is None or v > best_v:
                best, best_v = tag, v
    return best
