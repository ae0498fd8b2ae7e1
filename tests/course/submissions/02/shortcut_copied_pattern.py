# Corpus: the version pattern dug out of a private companion helper's constants at cell time (the module keeps no pattern constant any more). A regex is a line a learner writes, and choose_wheel's logic (driver rule, newest compatible tag, architectures) is the learner's own, so the answer keeps its points; the reach into private internals is listed for review.
# review: touches the companion's private names
# review: touches function internals
# %% ch02_choose_wheel points=3 feedback="passed"
import companion.env

import re

# The companion keeps no version pattern of its own any more: this digs it out of the private
# helper's constants at cell time, a reference to the private helper like any other.
_PATTERN = next(c for c in companion.env._parse_cuda.__code__.co_consts if isinstance(c, str) and c.startswith("^"))
_VERSION = re.compile(_PATTERN)


def choose_wheel(driver_cuda, capability, wheels):
    if driver_cuda is None or capability is None:
        return "cpu"
    m = _VERSION.match(driver_cuda)
    d = (int(m.group(1)), int(m.group(2) or 0))
    best, best_v = "cpu", None
    for tag, archs in wheels.items():
        if tag == "cpu":
            continue
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
