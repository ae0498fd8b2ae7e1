# Corpus: choose_wheel with a regex for the tags and the menu sorted newest first: full marks.
# %% ch02_choose_wheel points=3 feedback=passed
import re

_TAG = re.compile(r"^cu(\d+)(\d)$")


def choose_wheel(driver_cuda, capability, wheels):
    if not driver_cuda or not capability:
        return "cpu"
    drv = tuple(map(int, driver_cuda.split(".")[:2]))
    candidates = []
    for tag in wheels:
        m = _TAG.match(tag)
        if m:
            candidates.append(((int(m.group(1)), int(m.group(2))), tag))
    for version, tag in sorted(candidates, reverse=True):  # newest runtime first
        driver_ok = version <= drv or (version[0] == drv[0] and drv[0] >= 11)
        kernels = [(int(a[3:-1]), int(a[-1])) for a in wheels[tag] if a.startswith("sm_")]
        ptx = [(int(a[8:-1]), int(a[-1])) for a in wheels[tag] if a.startswith("compute_")]
        gpu_ok = any(k[0] == capability[0] and k[1] <= capability[1] for k in kernels) or (
            version <= drv and any(p <= tuple(capability) for p in ptx))
        if driver_ok and gpu_ok:
            return tag
    return "cpu"
