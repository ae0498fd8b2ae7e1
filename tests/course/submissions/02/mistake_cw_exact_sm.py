# Corpus: choose_wheel that takes a SASS entry only for the GPU's exact capability (sm_86 for an
# 8.6 GPU), not an older minor version of its own major (sm_86 also runs on 8.9). It must be told
# about SASS compatibility, not about the newest runtime.
# %% ch02_choose_wheel points=0 feedback="a GPU runs SASS of an older minor version of its own major"
def choose_wheel(driver_cuda, capability, wheels):
    if driver_cuda is None or capability is None:
        return "cpu"
    d_major, d_minor = (int(x) for x in driver_cuda.split(".")[:2])
    gpu_major, gpu_minor = capability
    best, best_version = "cpu", None
    for tag, archs in wheels.items():
        if tag == "cpu":
            continue
        digits = tag[2:]
        version = (int(digits[:-1]), int(digits[-1]))
        driver_older = version > (d_major, d_minor)
        if driver_older and not (version[0] == d_major and d_major >= 11):
            continue
        fits = False
        for arch in archs:
            kind, number = arch.split("_")
            arch_version = (int(number[:-1]), int(number[-1]))
            if kind == "sm" and arch_version == (gpu_major, gpu_minor):
                fits = True
            if kind == "compute" and arch_version <= (gpu_major, gpu_minor) and not driver_older:
                fits = True
        if fits and (best_version is None or version > best_version):
            best, best_version = tag, version
    return best
